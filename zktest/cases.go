package zktest

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
	"github.com/zksim/zksim/zkmem"
)

// Cases names test cases, each run on every backend it is listed for (in
// name order) by RunMem and RunReal.
type Cases map[string]func(t *testing.T, env *Env)

// With returns the union of c and more (more wins on a clash).
func (c Cases) With(more Cases) Cases {
	all := make(Cases, len(c)+len(more))
	maps.Copy(all, c)
	maps.Copy(all, more)
	return all
}

// caseOptions are the server settings RunMem and RunReal give both
// backends: FastOptions, with sessions of up to CaseSessionTimeout.
func caseOptions() zkmem.Options {
	opts := FastOptions()
	opts.MaxSessionTimeout = CaseSessionTimeout
	return opts
}

// CaseSessionTimeout is the session timeout Env.Conn asks for: 10s, the
// default of zkmem and of gozk.
const CaseSessionTimeout = 10 * time.Second

// Env is what a case works with: the backend it runs on and a fresh root.
type Env struct {
	*Backend
	// Root is a fresh path for the case, not yet created.
	Root string
}

// waitLimit bounds every wait of a case, so a broken recipe fails the test
// instead of hanging it. Under zkmem it is virtual time and costs nothing;
// it is never a speed assertion.
const waitLimit = 60 * time.Second

// Conn opens a new session asking for CaseSessionTimeout, closed when the
// test ends.
func (e *Env) Conn(t *testing.T) zksim.Conn {
	t.Helper()
	c, err := e.Connect(e.Ctx(t), CaseSessionTimeout)
	if err != nil {
		t.Fatalf("%s: connect: %v", e.Name, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
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

// RunMem runs every case on zkmem with FastOptions, sessions of up to
// CaseSessionTimeout allowed, each in its own testing/synctest bubble
// (virtual time, so timeouts cost nothing) with a fresh server, under the
// root "/test".
func RunMem(t *testing.T, cases Cases) {
	for _, name := range slices.Sorted(maps.Keys(cases)) {
		f := cases[name]
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f(t, &Env{Backend: OpenMem(t, caseOptions()), Root: "/test"})
			})
		})
	}
}

// RunReal runs every case on one real ZooKeeper started with the settings
// RunMem gives zkmem (see OpenReal), each under its own root. Outside CI
// it skips when ZooKeeper is not installed; under CI=true it fails
// instead.
func RunReal(t *testing.T, cases Cases) {
	b := OpenReal(t, caseOptions())
	for _, name := range slices.Sorted(maps.Keys(cases)) {
		f := cases[name]
		t.Run(name, func(t *testing.T) {
			f(t, &Env{Backend: b, Root: b.Real.Root(t)})
		})
	}
}

// Main is a TestMain for tests that use the harness: it runs the tests and
// fails the binary if goroutines leaked.
func Main(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
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
