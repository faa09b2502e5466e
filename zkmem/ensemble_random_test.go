package zkmem_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"
	"github.com/zksim/zksim"
	"github.com/zksim/zksim/zkmem"
)

// Random clients on a 3-member ensemble under random faults of members 1
// and 2, from fixed seeds. Member 0 is a witness: it lags all along (again
// after each election, which syncs it), so it replays the log on a tree of
// its own. Every call returns once the members it waits for apply; no
// client ever reads an older /counter than it saw or wrote; and in the end
// the witness lists every node, its stat, data and ACL, children in order,
// as the committed tree does.
func TestEnsembleRandomFaults(t *testing.T) {
	for seed := range uint64(20) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { randomEnsembleRun(t, seed) })
		})
	}
}

func randomEnsembleRun(t *testing.T, seed uint64) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(seed, 25))
	e := newEnsemble(t, 3, zkmem.EnsembleOptions{ReadOnly: true})
	var clients []*zkmem.Conn
	seen := map[*zkmem.Conn]int64{} // the newest /counter mzxid each client saw
	for i := range 4 {
		c := connectTo(t, e, []int{i % 3, (i + 1) % 3, (i + 2) % 3}, zkmem.WithCanBeReadOnly())
		clients = append(clients, c)
	}
	_, err := clients[0].Create(ctx, "/counter", nil, 0, zksim.OpenACL())
	require.NoError(t, err)
	e.Lag(0)
	elect := func() {
		if _, err := e.Elect(); err != nil {
			e.Restart(1)
			e.Restart(2)
			e.Heal(1)
			e.Heal(2)
			_, err = e.Elect()
			require.NoError(t, err)
		}
		e.Lag(0)
	}

	// call runs op on a goroutine and makes the members apply until it
	// returns, as a scheduler would.
	call := func(op func() error) error {
		done := async(op)
		for range 100 {
			synctest.Wait()
			select {
			case err := <-done:
				return err
			default:
			}
			for i := range 3 {
				e.ApplyNext(i)
			}
			if e.Leader() < 0 {
				elect()
			}
		}
		t.Fatal("a call never returned")
		return nil
	}
	ok := func(err error) bool {
		switch {
		case err == nil:
			return true
		case errors.Is(err, zksim.ErrConnectionLoss), errors.Is(err, zksim.ErrNotReadOnly),
			errors.Is(err, zksim.ErrNoNode), errors.Is(err, zksim.ErrNodeExists), errors.Is(err, zksim.ErrNotEmpty):
			return false
		}
		t.Fatalf("seed %d: unexpected error %v", seed, err)
		return false
	}
	for step := range 300 {
		i := 1 + rng.IntN(2)
		switch r := rng.IntN(60); {
		case r == 0:
			e.Lag(i)
		case r == 1:
			e.CatchUp(i)
		case r == 2 && e.Role(1) != zkmem.RoleDown && e.Role(2) != zkmem.RoleDown:
			e.Crash(i)
		case r == 3:
			e.Restart(i)
		case r == 4:
			e.Isolate(i)
		case r == 5:
			e.Heal(i)
		case r == 6:
			e.FailLeaderOnNextWrite(rng.IntN(2) == 0)
		case r == 7 && e.Leader() < 0:
			elect()
		default:
			c := clients[rng.IntN(len(clients))]
			if st := c.State(); st == zksim.StateExpired {
				continue
			}
			path := fmt.Sprintf("/n%d", rng.IntN(12))
			switch rng.IntN(6) {
			case 0:
				var st *zksim.Stat
				if ok(call(func() (err error) {
					st, err = c.Set(ctx, "/counter", []byte(fmt.Sprint(step)), -1)
					return err
				})) {
					seen[c] = max(seen[c], st.Mzxid)
				}
			case 1:
				var st *zksim.Stat
				if ok(call(func() (err error) { _, st, err = c.Get(ctx, "/counter"); return err })) {
					require.GreaterOrEqual(t, st.Mzxid, seen[c], "seed %d step %d: a client read an older /counter", seed, step)
					seen[c] = st.Mzxid
				}
			case 2:
				ok(call(func() error { _, err := c.Create(ctx, path, nil, 0, zksim.OpenACL()); return err }))
			case 3:
				ok(call(func() error { return c.Delete(ctx, path, -1) }))
			case 4:
				ok(call(func() error {
					_, err := c.Multi(ctx, &zksim.CreateOp{Path: path + "m", ACL: zksim.OpenACL()}, &zksim.DeleteOp{Path: path, Version: -1})
					return err
				}))
			case 5:
				acl := zksim.OpenACL()
				if rng.IntN(2) == 0 {
					acl = []zksim.ACL{{Perms: zksim.PermAll &^ zksim.PermDelete, Scheme: "world", ID: "anyone"}}
				}
				ok(call(func() error { _, err := c.SetACL(ctx, path, acl, -1); return err }))
			}
		}
	}

	// Heal members 1 and 2 (a write spends a leader failure still armed)
	// and let them keep up: they read the committed tree.
	for attempt := 0; ; attempt++ {
		for i := 1; i < 3; i++ {
			e.Restart(i)
			e.Heal(i)
			e.CatchUp(i)
		}
		if e.Leader() < 0 {
			elect()
		}
		_, err := connectTo(t, e, []int{1, 2}).Create(ctx, "/end", nil, zksim.ModePersistentSequential, zksim.OpenACL())
		if err == nil {
			break
		}
		require.ErrorIs(t, err, zksim.ErrConnectionLoss)
		require.Less(t, attempt, 3)
	}
	w := connectTo(t, e, []int{1})
	var ops []zksim.Op // a multi of many events
	for i := range 12 {
		ops = append(ops, &zksim.CreateOp{Path: fmt.Sprintf("/end-%d", i), ACL: zksim.OpenACL()})
	}
	_, err = w.Multi(ctx, ops...)
	require.NoError(t, err)
	require.Positive(t, e.Pending(0))
	for e.ApplyNext(0) {
	}
	require.Equal(t, dumpTree(t, w, "/"), dumpTree(t, connectTo(t, e, []int{0}), "/"), "seed %d", seed)
}

// dumpTree lists every node under path with its stat and data, children in
// the order the member lists them.
func dumpTree(t *testing.T, c *zkmem.Conn, path string) []string {
	t.Helper()
	ctx := context.Background()
	data, st, err := c.Get(ctx, path)
	require.NoError(t, err)
	acl, _, err := c.GetACL(ctx, path)
	require.NoError(t, err)
	out := []string{fmt.Sprintf("%s %q %+v %v", path, data, *st, acl)}
	names, _, err := c.Children(ctx, path)
	require.NoError(t, err)
	for _, n := range names {
		child := path + "/" + n
		if path == "/" {
			child = "/" + n
		}
		out = append(out, dumpTree(t, c, child)...)
	}
	return out
}
