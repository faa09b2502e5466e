package sim_test

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zksim/zksim/faults"
	"github.com/zksim/zksim/sim"
)

// The user's code: a leader election written against go-zookeeper's
// *zk.Conn, as it would run in production. Nothing in it knows of the
// simulator.

var errLostNode = errors.New("election: our node is gone")

// runForLeader joins the election under dir as id (unique to this
// attempt) and returns once this client leads, with the path of its node:
// the smallest sequence number leads, each candidate watches the one just
// before it. Its node's name starts with id, so that a create whose reply
// was lost is found again rather than made twice; and when it gives up (an
// error, ctx done) it deletes its node, so that no orphan keeps the others
// waiting behind it while its session lives.
func runForLeader(ctx context.Context, zc *zk.Conn, dir, id string) (_ string, err error) {
	prefix := id + "-n-"
	me := ""
	sent := false // a create was sent whose outcome we do not know
	for me == "" {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		if sent { // the create may have been applied: look for our node
			names, _, err := zc.Children(dir)
			if errors.Is(err, zk.ErrSessionExpired) {
				return "", err
			}
			if err != nil {
				time.Sleep(100 * time.Millisecond)
				continue
			}
			for _, n := range names {
				if strings.HasPrefix(n, prefix) {
					me = dir + "/" + n
				}
			}
			if me != "" {
				break
			}
		}
		p, err := zc.Create(dir+"/"+prefix, nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
		switch {
		case err == nil:
			me = p
		case errors.Is(err, zk.ErrSessionExpired), errors.Is(err, zk.ErrNoNode):
			return "", err
		default:
			sent = true
		}
	}
	defer func() {
		if err != nil {
			giveUp(ctx, zc, me)
		}
	}()
	for {
		names, _, err := zc.Children(dir)
		if err != nil {
			return "", err
		}
		slices.SortFunc(names, func(a, b string) int { return strings.Compare(a[len(a)-10:], b[len(b)-10:]) })
		i := slices.Index(names, path.Base(me))
		switch {
		case i < 0:
			return "", errLostNode // the session expired
		case i == 0:
			return me, nil
		}
		ok, _, ch, err := zc.ExistsW(dir + "/" + names[i-1])
		if err != nil {
			return "", err
		}
		if !ok {
			continue
		}
		if ev := <-ch; ev.Err != nil {
			return "", ev.Err
		}
	}
}

// giveUp deletes our node, through connection losses, until it is gone or
// the session is.
func giveUp(ctx context.Context, zc *zk.Conn, me string) {
	for ctx.Err() == nil {
		err := zc.Delete(me, -1)
		if err == nil || errors.Is(err, zk.ErrNoNode) || errors.Is(err, zk.ErrSessionExpired) || errors.Is(err, zk.ErrClosing) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// leaders records who leads, to check that at most one does at a time.
type leaders struct {
	mu      sync.Mutex
	now     map[int]int64 // client -> the session it leads on
	changes int
}

// ExampleWorld_ConnectZK tests a leader election written against
// go-zookeeper's *zk.Conn (runForLeader, above) in the simulator, under the
// fault mix: three go-zookeeper clients campaign, lead for a while and step
// down, again and again, for a minute of virtual time, and after every step
// of the scheduler the test checks that at most one of them leads on a
// live session (checkUserElection, below). A failure logs the seed and the
// trace; the same seed replays it. TestUserElectionZK runs it for 20
// seeds.
func ExampleWorld_ConnectZK() {
	testElection := func(t *testing.T) {
		cfg := sim.Config{Seed: 7, SessionTimeout: 4 * time.Second, Policy: faults.Mix(0.02)}
		sim.Test(t, cfg, func(t *testing.T, w *sim.World) {
			checkUserElection(t, w) // ConnectZK three times, run the election, check
		})
	}
	_ = testElection // func TestElection(t *testing.T) { testElection(t) }
}

// TestUserElectionZK runs the example's test for 20 seeds.
func TestUserElectionZK(t *testing.T) {
	for seed := range uint64(20) {
		sim.Test(t, sim.Config{Seed: seed, SessionTimeout: 4 * time.Second, Server: zkmemOptions(), Policy: faults.Mix(0.02)}, func(t *testing.T, w *sim.World) {
			checkUserElection(t, w)
		})
	}
}

// checkUserElection is the body of the example's test.
func checkUserElection(t *testing.T, w *sim.World) {
	ls := &leaders{now: map[int]int64{}}
	for i := range 3 {
		zc, events, err := w.ConnectZK()
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			for range events { // go-zookeeper drops what nobody reads
			}
		}()
		go func() {
			ctx := w.Context()
			for attempt := 0; ctx.Err() == nil; attempt++ {
				if _, err := zc.Create("/election", nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
					time.Sleep(time.Second)
					continue
				}
				me, err := runForLeader(ctx, zc, "/election", fmt.Sprintf("c%d-%d", i, attempt))
				if err != nil {
					time.Sleep(time.Second)
					continue
				}
				ls.mu.Lock()
				ls.now[i] = zc.SessionID()
				ls.changes++
				ls.mu.Unlock()
				time.Sleep(500 * time.Millisecond) // lead
				ls.mu.Lock()
				delete(ls.now, i)
				ls.mu.Unlock()
				giveUp(ctx, zc, me) // step down
			}
		}()
	}
	end := w.Now() + time.Minute
	err := w.Run(func() bool {
		live := w.Server().SessionIDs()
		ls.mu.Lock()
		defer ls.mu.Unlock()
		var leading []int
		for i, sid := range ls.now {
			if slices.Contains(live, sid) {
				leading = append(leading, i)
			}
		}
		if len(leading) > 1 {
			t.Fatalf("%d clients lead at once on live sessions: %v", len(leading), leading)
		}
		return w.Now() >= end
	})
	if err != nil {
		t.Fatal(err)
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	t.Logf("seed %d: leadership changed hands %d times in a minute", w.Seed(), ls.changes)
	if ls.changes < 10 {
		t.Errorf("leadership changed hands only %d times in a minute", ls.changes)
	}
}
