package sim_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/sim"
	"github.com/zksim/zksim/zkmem"
)

// Every call of the interface goes through the scheduler and returns what
// zkmem returns.
func TestEveryCallGoesThroughTheScheduler(t *testing.T) {
	cfg := sim.Config{Seed: 2, Clients: 2, Server: zkmem.Options{ExtendedTypes: true}}
	sim.Test(t, cfg, func(t *testing.T, w *sim.World) {
		c, other := w.Conn(0), w.Conn(1)
		var problems []string
		var done box[bool]
		check := func(what string, ok bool, got ...any) {
			if !ok {
				problems = append(problems, fmt.Sprintf("%s: got %v", what, got))
			}
		}
		w.Go(func(ctx context.Context) {
			defer done.put(true)
			rec, err := c.AddWatch(ctx, "/p", zksim.WatchPersistentRecursive)
			check("AddWatch", err == nil, err)
			p, err := c.Create(ctx, "/p", []byte("d"), zksim.ModePersistent, open)
			check("Create", err == nil && p == "/p", p, err)
			ev := <-rec
			check("persistent watch event", ev.Type == zksim.EventNodeCreated && ev.Path == "/p", ev)
			p, err = c.CreateTTL(ctx, "/p/ttl", nil, zksim.ModePersistentWithTTL, open, time.Hour)
			check("CreateTTL", err == nil && p == "/p/ttl", p, err)
			_, err = other.Create(ctx, "/p/e", nil, zksim.ModeEphemeral, open)
			check("Create ephemeral", err == nil, err)
			data, st, err := c.Get(ctx, "/p")
			check("Get", err == nil && string(data) == "d" && st.NumChildren == 2, data, st, err)
			st, err = c.Set(ctx, "/p", []byte("e"), st.Version)
			check("Set", err == nil && st.Version == 1, st, err)
			names, _, err := c.Children(ctx, "/p")
			check("Children", err == nil && slices.Equal(names, []string{"e", "ttl"}), names, err)
			ok, _, err := c.Exists(ctx, "/p/none")
			check("Exists", err == nil && !ok, ok, err)
			res, err := c.Multi(ctx, &zksim.CreateOp{Path: "/p/m", ACL: open}, &zksim.SetOp{Path: "/p/m", Data: []byte("x"), Version: -1})
			check("Multi", err == nil && len(res) == 2 && res[0].Path == "/p/m", res, err)
			p, err = c.Sync(ctx, "/p")
			check("Sync", err == nil && p == "/p", p, err)
			acl, st, err := c.GetACL(ctx, "/p")
			check("GetACL", err == nil && len(acl) == 1, acl, err)
			_, err = c.SetACL(ctx, "/p", open, st.Aversion)
			check("SetACL", err == nil, err)
			check("AddAuth", c.AddAuth(ctx, "digest", []byte("u:p")) == nil)
			n, err := c.GetAllChildrenNumber(ctx, "/p")
			check("GetAllChildrenNumber", err == nil && n == 3, n, err)
			eph, err := other.GetEphemerals(ctx, "/")
			check("GetEphemerals", err == nil && slices.Equal(eph, []string{"/p/e"}), eph, err)
			err = c.RemoveWatches(ctx, "/p", zksim.WatcherPersistentRecursive)
			check("RemoveWatches", err == nil, err)
			err = c.Delete(ctx, "/p/m", -1)
			check("Delete", err == nil, err)
			err = c.Delete(ctx, "/p", -1)
			check("Delete non-empty", errors.Is(err, zksim.ErrNotEmpty), err)
			check("Close", other.Close() == nil)
			check("State after Close", other.State() == zksim.StateClosed, other.State())
			_, _, err = other.Get(ctx, "/p")
			check("call after Close", errors.Is(err, zksim.ErrClosing), err)
		})
		run(t, w, done.ok)
		for _, p := range problems {
			t.Error(p)
		}
		tr := w.TraceString()
		for _, op := range []string{"addWatch", "create", "getData", "setData", "getChildren", "exists", "multi", "sync",
			"getACL", "setACL", "addAuth", "getAllChildrenNumber", "getEphemerals", "removeWatches", "delete", "close"} {
			if !strings.Contains(tr, " apply "+op+" ") {
				t.Errorf("no %s in the trace", op)
			}
		}
	})
}

// Workers sets how many requests the server serves at once.
func TestCostModelWorkers(t *testing.T) {
	for _, workers := range []int{1, 2} {
		cfg := sim.Config{Seed: 1, Clients: 2, Cost: sim.CostModel{PerRequest: 10 * time.Millisecond, Workers: workers}}
		sim.Test(t, cfg, func(t *testing.T, w *sim.World) {
			var at [2]box[time.Duration]
			for i := range 2 {
				c := w.Conn(i)
				w.Go(func(ctx context.Context) {
					c.Exists(ctx, "/")
					at[i].put(w.Now())
				})
			}
			run(t, w, func() bool { return at[0].ok() && at[1].ok() })
			last := max(at[0].get(), at[1].get())
			if want := time.Duration(20/workers) * time.Millisecond; last != want {
				t.Errorf("workers=%d: two 10ms requests done at %v, want %v", workers, last, want)
			}
		})
	}
}
