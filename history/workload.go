package history

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path"
	"sync"
	"time"

	"github.com/zksim/zksim"
)

// Workload is a random concurrent workload: each client does Ops
// operations, drawn from its own seeded generator, on a few children of
// Root. Every create and set writes data unique in the run, so that Check
// ties each read to the write it shows.
type Workload struct {
	// Root is the directory the workload works in; it is created (outside
	// the history) if missing.
	Root string
	// Paths is the number of children of Root used (default 3).
	Paths int
	// Ops is the number of operations each client does (default 20).
	Ops int
	// Seed seeds the clients' generators (client i draws from Seed and i).
	Seed uint64
	// Think, if set, is the longest pause between two operations of a
	// client (drawn uniformly).
	Think time.Duration
	// Timeout bounds each operation (default 10s); an operation that runs
	// out is recorded with an Unknown outcome.
	Timeout time.Duration
	// Behind, if set, reports whether client i's server is behind the
	// leader (on an ensemble, a member that has not applied every commit;
	// in the simulator, sim.World.Member and zkmem.Ensemble.Pending tell).
	// A client that is behind makes its next operation a sync of a path
	// followed by a read of every path: the reads a lagging member must
	// serve fresh, drawn where they test something (a sync on a member
	// that keeps up returns at once, whether it is right or not).
	// It is called from the client's goroutine, before each operation.
	Behind func(i int) bool
}

func (wl Workload) withDefaults() Workload {
	if wl.Paths <= 0 {
		wl.Paths = 3
	}
	if wl.Ops <= 0 {
		wl.Ops = 20
	}
	if wl.Timeout <= 0 {
		wl.Timeout = 10 * time.Second
	}
	return wl
}

// Run runs the workload with one client per conn (client i on conns[i],
// recorded through rec as client i) and blocks until every client has
// done its operations or ctx is done. It returns an error only if Root
// cannot be created; the operations' errors are part of the history.
func (wl Workload) Run(ctx context.Context, rec *Recorder, conns []zksim.Conn) error {
	var wg sync.WaitGroup
	errs := make([]error, len(conns))
	for i, conn := range conns {
		wg.Go(func() { errs[i] = wl.Client(rec, i, conn)(ctx) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Client returns the body of client i of the workload on conn, recorded
// through rec: it creates Root if missing (retrying a lost connection,
// unrecorded), then does the operations, and returns once done, when its
// session has ended (expired or closed), or when ctx is done. Run calls it; under the simulator, start it with
// sim.World.Go.
func (wl Workload) Client(rec *Recorder, i int, conn zksim.Conn) func(ctx context.Context) error {
	wl = wl.withDefaults()
	return func(ctx context.Context) error {
		if err := wl.setup(ctx, conn); err != nil {
			return fmt.Errorf("history: client %d: create %s: %w", i, wl.Root, err)
		}
		c := &wlClient{wl: wl, conn: rec.Conn(i, conn), id: i,
			rng: rand.New(rand.NewPCG(wl.Seed, uint64(i)+1)), versions: map[string]int32{}}
		for n := range wl.Ops {
			if ctx.Err() != nil {
				return nil
			}
			if wl.Think > 0 {
				select {
				case <-time.After(time.Duration(c.rng.Int64N(int64(wl.Think)))):
				case <-ctx.Done():
					return nil
				}
			}
			if err := c.step(ctx, n); errors.Is(err, zksim.ErrSessionExpired) || errors.Is(err, zksim.ErrClosing) || errors.Is(err, zksim.ErrAuthFailed) {
				return nil // the session is over: nothing more can happen
			}
		}
		return nil
	}
}

// setup creates Root, trying again after a connection loss.
func (wl Workload) setup(ctx context.Context, conn zksim.Conn) error {
	var err error
	for range 50 {
		octx, cancel := context.WithTimeout(ctx, wl.Timeout)
		_, err = conn.Create(octx, wl.Root, nil, zksim.ModePersistent, zksim.OpenACL())
		cancel()
		if err == nil || errors.Is(err, zksim.ErrNodeExists) {
			return nil
		}
		if ctx.Err() != nil || errors.Is(err, zksim.ErrSessionExpired) || errors.Is(err, zksim.ErrClosing) {
			return err
		}
		select {
		case <-time.After(100 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return err
}

type wlClient struct {
	wl       Workload
	conn     zksim.Conn
	id       int
	rng      *rand.Rand
	versions map[string]int32 // the last version seen of each path
}

// version picks the version a set or delete expects: any, the last seen,
// or a recent one.
func (c *wlClient) version(p string) int32 {
	switch c.rng.IntN(3) {
	case 0:
		return -1
	case 1:
		if v, ok := c.versions[p]; ok {
			return v
		}
	}
	return c.rng.Int32N(3)
}

// step does operation n and returns its error.
func (c *wlClient) step(ctx context.Context, n int) error {
	ctx, cancel := context.WithTimeout(ctx, c.wl.Timeout)
	defer cancel()
	p := path.Join(c.wl.Root, fmt.Sprintf("k%d", c.rng.IntN(c.wl.Paths)))
	if c.wl.Behind != nil && c.wl.Behind(c.id) {
		return c.syncRead(ctx, p)
	}
	data := fmt.Appendf(nil, "c%d-%d", c.id, n)
	var err error
	switch r := c.rng.IntN(100); {
	case r < 15:
		_, err = c.conn.Create(ctx, p, data, zksim.ModePersistent, zksim.OpenACL())
	case r < 40:
		var st *zksim.Stat
		if st, err = c.conn.Set(ctx, p, data, c.version(p)); err == nil {
			c.versions[p] = st.Version
		}
	case r < 50:
		err = c.conn.Delete(ctx, p, c.version(p))
	case r < 80:
		var st *zksim.Stat
		if _, st, err = c.conn.Get(ctx, p); err == nil {
			c.versions[p] = st.Version
		}
	case r < 90:
		_, _, err = c.conn.Exists(ctx, p)
	case r < 95:
		_, _, err = c.conn.Children(ctx, c.wl.Root)
	default:
		_, err = c.conn.Sync(ctx, p)
	}
	return err
}

// syncRead syncs p, then reads every path (unless the sync failed): a
// sync brings the client's server up to date on all of them.
func (c *wlClient) syncRead(ctx context.Context, p string) error {
	if _, err := c.conn.Sync(ctx, p); err != nil {
		return err
	}
	for k := range c.wl.Paths {
		q := path.Join(c.wl.Root, fmt.Sprintf("k%d", k))
		_, st, err := c.conn.Get(ctx, q)
		switch {
		case err == nil:
			c.versions[q] = st.Version
		case !errors.Is(err, zksim.ErrNoNode):
			return err
		}
	}
	return nil
}
