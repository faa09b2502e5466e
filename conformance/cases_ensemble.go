package conformance

import (
	"context"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zksim/zksim"
)

// pendingWait is how long a case watches a call that must not be answered
// (a write or sync on a lagging member) before it ends the lag.
const pendingWait = 200 * time.Millisecond

// ensembleCases are the cases about what a client sees of an ensemble:
// reads served by its own member, which may lag the leader (sequential
// consistency, not linearizable reads), and sessions that move between
// members. The lagging member is a follower that has stopped applying the
// leader's commits (Ensemble.Lag); on a real ensemble its quorum link is
// held, so what it has not applied cannot be seen through it, and the
// waits below are for answers that cannot come, never for ones that merely
// might.
func ensembleCases() []ensembleCase {
	return []ensembleCase{
		{"read-your-writes-on-follower", func(e *ensEnv) {
			// A follower answers its client's write only once it has applied
			// it, so the next read there sees it.
			c := e.connect(e.followers[0])
			e.create(c, e.p("a"), []byte("0"), zksim.ModePersistent)
			for _, v := range []string{"1", "2", "3"} {
				_, err := c.Set(e.ctx, e.p("a"), []byte(v), -1)
				require.NoError(e.t, err)
				require.Equal(e.t, []byte(v), e.data(c, e.p("a")))
			}
			e.create(c, e.p("a", "child"), nil, zksim.ModePersistent)
			names, _, err := c.Children(e.ctx, e.p("a"))
			require.NoError(e.t, err)
			require.Equal(e.t, []string{"child"}, names)
		}},
		{"own-write-answered-after-member-applies", func(e *ensEnv) {
			// On a lagging follower a client's write commits without the
			// follower, but its answer waits until the follower has applied
			// it; meanwhile the follower's other clients read the old state.
			f := e.followers[0]
			c := e.connect(f)
			r := e.connect(f)
			catchUp := e.lag(f)
			done := pending(func() error {
				_, err := c.Create(e.ctx, e.p("a"), []byte("x"), zksim.ModePersistent, zksim.OpenACL())
				return err
			})
			deadline := time.Now().Add(10 * time.Second)
			for !e.exists(e.admin, e.p("a")) {
				require.False(e.t, time.Now().After(deadline), "the quorum did not commit the create within 10s")
				time.Sleep(5 * time.Millisecond)
			}
			e.stillPending(done, pendingWait, "the create on the lagging member")
			require.False(e.t, e.exists(r, e.p("a")), "the lagging member served a write it has not applied")
			catchUp()
			require.NoError(e.t, e.answered(done, "the create"))
			require.Equal(e.t, []byte("x"), e.data(c, e.p("a")))
			require.True(e.t, e.exists(r, e.p("a")))
		}},
		{"no-older-state-after-move", func(e *ensEnv) {
			// A client that has seen a zxid is refused by a member that has
			// not applied it, and moves on to the next member of its list:
			// it never sees an older state than it has seen.
			f1, f2 := e.followers[0], e.followers[1]
			c := e.connect(f1, f2)
			r := e.connect(f2)
			catchUp := e.lag(f2)
			e.create(c, e.p("a"), []byte("x"), zksim.ModePersistent)
			require.False(e.t, e.exists(r, e.p("a")), "member %d is lagging: it cannot have the node", f2)
			id := c.SessionID()
			e.control(e.ens.Move(e.ctx, c), "move a session")
			require.Equal(e.t, f1, e.ens.MemberOf(c), "member %d is behind the client, which must not stay there", f2)
			require.Equal(e.t, id, c.SessionID())
			require.Equal(e.t, []byte("x"), e.data(c, e.p("a")))
			catchUp()
			// Caught up, the member takes the client.
			require.NoError(e.t, e.ens.Move(e.ctx, c))
			require.Equal(e.t, f2, e.ens.MemberOf(c))
			require.Equal(e.t, []byte("x"), e.data(c, e.p("a")))
		}},
		{"sync-then-read-sees-latest", func(e *ensEnv) {
			// A read on a lagging member is stale; sync returns once the
			// member has applied what the leader had committed, and a read
			// after it sees the latest write.
			f := e.followers[0]
			e.create(e.admin, e.p("a"), []byte("old"), zksim.ModePersistent)
			r := e.connect(f)
			require.Equal(e.t, []byte("old"), e.data(r, e.p("a")))
			catchUp := e.lag(f)
			_, err := e.admin.Set(e.ctx, e.p("a"), []byte("new"), -1)
			require.NoError(e.t, err)
			require.Equal(e.t, []byte("old"), e.data(r, e.p("a")), "a lagging member serves what it has applied")
			done := pending(func() error {
				_, err := r.Sync(e.ctx, e.p("a"))
				return err
			})
			e.stillPending(done, pendingWait, "sync on the lagging member")
			catchUp()
			require.NoError(e.t, e.answered(done, "sync"))
			require.Equal(e.t, []byte("new"), e.data(r, e.p("a")))
		}},
		{"new-session-reads-earlier-writes", func(e *ensEnv) {
			// A member answers a new session only once it has applied its
			// createSession, which the leader committed after every write
			// that had returned: a client that connects through a lagging
			// member reads them. (A real member's answer waits for the
			// catch-up; zkmem's lagging member applies up to the session.)
			f := e.followers[0]
			catchUp := e.lag(f)
			e.create(e.admin, e.p("a"), []byte("x"), zksim.ModePersistent)
			var c zksim.Conn
			seen := false
			done := pending(func() error {
				var err error
				if c, err = e.ens.Connect(e.ctx, e.ens.Facts().MaxSessionTimeout, f); err != nil {
					return err
				}
				seen, _, err = c.Exists(e.ctx, e.p("a"))
				return err
			})
			time.Sleep(pendingWait)
			catchUp()
			require.NoError(e.t, e.answered(done, "connect through the lagging member, then exists"))
			e.t.Cleanup(func() { _ = c.Close() })
			require.Equal(e.t, f, e.ens.MemberOf(c))
			require.True(e.t, seen, "the new session on member %d misses a node created before it", f)
		}},
		{"watch-event-before-new-data", func(e *ensEnv) {
			// A client on a lagging member gets neither the event nor the
			// data of a change before its member applies it, and once it
			// can read the new data the event has been delivered.
			f := e.followers[0]
			e.create(e.admin, e.p("a"), []byte("1"), zksim.ModePersistent)
			r := e.connect(f)
			_, _, ch, err := r.GetW(e.ctx, e.p("a"))
			require.NoError(e.t, err)
			catchUp := e.lag(f)
			_, err = e.admin.Set(e.ctx, e.p("a"), []byte("2"), -1)
			require.NoError(e.t, err)
			require.Equal(e.t, []byte("1"), e.data(r, e.p("a")))
			select {
			case ev := <-ch:
				e.t.Fatalf("the lagging member delivered %v before applying the change", ev)
			default:
			}
			catchUp()
			deadline := time.Now().Add(10 * time.Second)
			for string(e.data(r, e.p("a"))) != "2" {
				require.False(e.t, time.Now().After(deadline), "the caught-up member still serves the old data")
				time.Sleep(5 * time.Millisecond)
			}
			select {
			case ev := <-ch:
				require.Equal(e.t, zksim.Event{Type: zksim.EventNodeDataChanged, State: zksim.StateConnected, Path: e.p("a")}, ev)
			default:
				e.t.Fatal("the client read the new data before it received the watch event")
			}
		}},
		{"ephemeral-survives-member-crash", func(e *ensEnv) {
			// A session whose member crashes moves to the next member of its
			// list with its ephemerals; the restarted member catches up.
			f1, f2 := e.followers[0], e.followers[1]
			c := e.connect(f1, f2)
			id := c.SessionID()
			e.create(c, e.p("e"), []byte("mine"), zksim.ModeEphemeral)
			restart := e.crash(f1)
			e.awaitMember(c, f2, id)
			for _, s := range []zksim.Conn{c, e.admin} {
				_, st, err := s.Get(e.ctx, e.p("e"))
				require.NoError(e.t, err)
				require.Equal(e.t, id, st.EphemeralOwner)
			}
			e.create(c, e.p("after"), nil, zksim.ModePersistent)
			restart()
			o := e.connect(f1)
			_, st, err := o.Get(e.ctx, e.p("e"))
			require.NoError(e.t, err)
			require.Equal(e.t, id, st.EphemeralOwner)
			require.True(e.t, e.exists(o, e.p("after")))
		}},
		{"ephemeral-survives-leader-change", func(e *ensEnv) {
			// When the leader crashes the others elect a new one; sessions
			// on a follower and on the old leader keep their ephemerals and
			// go on writing.
			leader, f, g := e.leader, e.followers[0], e.followers[1]
			c := e.connect(f)
			d := e.connect(leader, g)
			cid, did := c.SessionID(), d.SessionID()
			e.create(c, e.p("c"), nil, zksim.ModeEphemeral)
			e.create(d, e.p("d"), nil, zksim.ModeEphemeral)
			restart := e.crash(leader)
			next, err := e.ens.Leader(e.ctx)
			require.NoError(e.t, err)
			require.NotEqual(e.t, leader, next, "the crashed member still leads")
			e.awaitMember(c, f, cid)
			e.awaitMember(d, g, did)
			for node, owner := range map[string]int64{"c": cid, "d": did} {
				for _, s := range []zksim.Conn{c, d} {
					_, st, err := s.Get(e.ctx, e.p(node))
					require.NoError(e.t, err, "get %s", node)
					require.Equal(e.t, owner, st.EphemeralOwner, "owner of %s", node)
				}
			}
			e.create(c, e.p("c-after"), nil, zksim.ModePersistent)
			e.create(d, e.p("d-after"), nil, zksim.ModePersistent)
			restart()
		}},
		{"read-only-isolated-member", func(e *ensEnv) {
			// A member cut off from the quorum serves a client that allows
			// read-only mode from the state it had, refuses its writes with
			// NotReadOnly, and refuses other clients; the quorum goes on
			// without it, and the healed member catches up.
			f := e.followers[0]
			e.create(e.admin, e.p("a"), []byte("x"), zksim.ModePersistent)
			s := e.connect(f)
			_, err := s.Sync(e.ctx, e.p("a")) // f has applied the create
			require.NoError(e.t, err)
			heal := e.isolate(f)
			ro, err := e.ens.ConnectReadOnly(e.ctx, e.ens.Facts().MaxSessionTimeout, f)
			e.control(err, "open a read-only session")
			defer ro.Close()
			require.True(e.t, ro.ReadOnly(), "the isolated member granted a read-write session")
			data, _, err := ro.Get(e.ctx, e.p("a"))
			require.NoError(e.t, err)
			require.Equal(e.t, []byte("x"), data)
			_, err = ro.Create(e.ctx, e.p("b"), nil, zksim.ModePersistent)
			require.ErrorIs(e.t, err, zksim.ErrNotReadOnly)
			e.create(e.admin, e.p("c"), nil, zksim.ModePersistent)
			_, _, err = ro.Get(e.ctx, e.p("c"))
			require.ErrorIs(e.t, err, zksim.ErrNoNode, "the isolated member cannot have a write made after it was cut off")
			refuseCtx, cancel := context.WithTimeout(e.ctx, 1500*time.Millisecond)
			defer cancel()
			if c, err := e.ens.Connect(refuseCtx, e.ens.Facts().MaxSessionTimeout, f); err == nil {
				_ = c.Close()
				e.t.Fatal("the read-only member took a client that does not allow read-only mode")
			}
			heal()
			o := e.connect(f)
			require.True(e.t, e.exists(o, e.p("c")))
			require.False(e.t, e.exists(o, e.p("b")))
		}},
	}
}
