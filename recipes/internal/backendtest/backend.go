package backendtest

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/gozk"
	"github.com/zksim/zksim/zkmem"
	"github.com/zksim/zksim/zkserver"
)

// Cases names test cases, each run on every backend it is listed for (in
// name order).
type Cases map[string]func(t *testing.T, env *Env)

// With returns the union of c and more (more wins on a clash).
func (c Cases) With(more Cases) Cases {
	all := make(Cases, len(c)+len(more))
	maps.Copy(all, c)
	maps.Copy(all, more)
	return all
}

// Env is what a case works with.
type Env struct {
	// Root is a fresh path for the case, not yet created.
	Root string
	// Mem is the zkmem server, nil on the real server.
	Mem *zkmem.Server
	// Real is the real server, nil on zkmem.
	Real    *zkserver.Server
	connect func(t *testing.T) zksim.Conn
}

// waitLimit bounds every wait of a case, so a broken recipe fails the test
// instead of hanging it. Under zkmem it is virtual time and costs nothing;
// it is never a speed assertion.
const waitLimit = 60 * time.Second

// Conn opens a new session, closed when the test ends.
func (e *Env) Conn(t *testing.T) zksim.Conn {
	t.Helper()
	return e.connect(t)
}

// MemConn opens a new zkmem session with opts; the case must be a zkmem
// one.
func (e *Env) MemConn(t *testing.T, opts ...zkmem.ConnOption) *zkmem.Conn {
	t.Helper()
	if e.Mem == nil {
		t.Fatal("MemConn on the real server")
	}
	c, err := e.Mem.Connect(opts...)
	if err != nil {
		t.Fatalf("zkmem connect: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// Ctx returns the test's context bounded by waitLimit.
func (e *Env) Ctx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), waitLimit)
	t.Cleanup(cancel)
	return ctx
}

// Path returns Root + "/" + elem.
func (e *Env) Path(elem string) string { return e.Root + "/" + elem }

// Settle waits until every goroutine of a zkmem case is blocked (so
// everything that can happen has happened); on the real server it does
// nothing. Cases use it to make a schedule deterministic, never for
// correctness.
func (e *Env) Settle() {
	if e.Mem != nil {
		synctest.Wait()
	}
}

// Children returns the sorted children of p as conn sees them, failing the
// test on error.
func Children(t *testing.T, ctx context.Context, conn zksim.Conn, p string) []string {
	t.Helper()
	children, _, err := conn.Children(ctx, p)
	if err != nil {
		t.Fatalf("children of %s: %v", p, err)
	}
	slices.Sort(children)
	return children
}

// RunMem runs every case on zkmem, each in its own bubble and server.
func RunMem(t *testing.T, cases Cases) {
	for _, name := range slices.Sorted(maps.Keys(cases)) {
		f := cases[name]
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv := zkmem.NewServer(zkmem.Options{})
				t.Cleanup(srv.Close)
				env := &Env{Root: "/test", Mem: srv}
				env.connect = func(t *testing.T) zksim.Conn { return env.MemConn(t) }
				f(t, env)
			})
		})
	}
}

// RunReal runs every case on the shared real server, each under its own
// root. Outside CI it skips when ZooKeeper is not installed.
func RunReal(t *testing.T, cases Cases) {
	srv := zkserver.Shared(t)
	for _, name := range slices.Sorted(maps.Keys(cases)) {
		f := cases[name]
		t.Run(name, func(t *testing.T) {
			env := &Env{Root: srv.Root(t), Real: srv}
			env.connect = func(t *testing.T) zksim.Conn {
				return srv.Connect(t, gozk.WithSessionTimeout(2*time.Second))
			}
			f(t, env)
		})
	}
}

// Main is the TestMain of a recipes package: it runs the tests, stops the
// shared real server, and fails the binary if goroutines leaked.
func Main(m *testing.M) {
	code := m.Run()
	zkserver.StopShared()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}
