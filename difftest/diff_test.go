package difftest

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
	"pgregory.net/rapid"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/gozk"
	"github.com/zksim/zksim/zkmem"
	"github.com/zksim/zksim/zkserver"
	"github.com/zksim/zksim/zktest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// defaultSequences is how many sequences one run checks unless
// -rapid.checks or RAPID_CHECKS says otherwise.
const defaultSequences = 2000

// realSessionTimeout is the session timeout asked of the real server.
const realSessionTimeout = 30 * time.Second

// stepLimit bounds one step on either backend; reaching it is a failure.
const stepLimit = 30 * time.Second

// options are the settings of both sides: zktest.FastOptions, with long
// sessions allowed. Nothing here tests timeouts, and a connection dropped
// by a starved client (go-zookeeper gives up after 2/3 of the session
// timeout) would reconnect in the middle of a sequence.
func options() zkmem.Options {
	opts := zktest.FastOptions()
	opts.MaxSessionTimeout = 60 * time.Second
	return opts
}

func TestZkmemMatchesRealZooKeeper(t *testing.T) {
	server := zktest.OpenReal(t, options(),
		// fsync off: the comparison is about semantics, and it makes a
		// write on the real server several times cheaper.
		zkserver.WithSystemProperty("zookeeper.forceSync", "no"),
	)
	setDefaultChecks(t, defaultSequences)
	var sequences atomic.Int64
	st := newStats()
	rapid.Check(t, func(rt *rapid.T) {
		runSequence(rt, server, fmt.Sprintf("/difftest-%d", sequences.Add(1)), st)
	})
	t.Logf("compared: %v", st)
}

// setDefaultChecks makes rapid check n sequences unless the command line
// or the environment chose a number.
func setDefaultChecks(t *testing.T, n int) {
	if _, ok := os.LookupEnv("RAPID_CHECKS"); ok {
		return
	}
	chosen := false
	flag.Visit(func(f *flag.Flag) { chosen = chosen || f.Name == "rapid.checks" })
	if chosen {
		return
	}
	old := flag.Lookup("rapid.checks").Value.String()
	if err := flag.Set("rapid.checks", strconv.Itoa(n)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = flag.Set("rapid.checks", old) })
}

// runSequence runs one generated sequence on a fresh zkmem server with the
// real server's settings and under root on the real server, comparing
// every step.
func runSequence(rt *rapid.T, realBackend *zktest.Backend, root string, st *stats) {
	srv := realBackend.Real
	ctx := context.Background()
	n := rapid.SampledFrom([]int{2, 3, 1}).Draw(rt, "sessions")

	memSrv := zkmem.NewServer(realBackend.Facts)
	rt.Cleanup(memSrv.Close)
	// The oracle session exists only on zkmem and is opened before the
	// root, so it does not shift the normalised zxids.
	oracle, err := memSrv.Connect()
	if err != nil {
		rt.Fatalf("zkmem oracle: %v", err)
	}
	memConns := make([]zksim.Conn, n)
	realConns := make([]zksim.Conn, n)
	for i := range n {
		mc, err := memSrv.Connect(zkmem.WithSessionTimeout(2 * time.Second))
		if err != nil {
			rt.Fatalf("zkmem session %d: %v", i, err)
		}
		memConns[i] = mc
		connectCtx, cancel := context.WithTimeout(ctx, stepLimit)
		rc, err := gozk.Connect(connectCtx, []string{srv.Addr()}, gozk.WithSessionTimeout(realSessionTimeout))
		cancel()
		if err != nil {
			rt.Fatalf("real session %d: %v", i, err)
		}
		realConns[i] = rc
		rt.Cleanup(func() { _ = rc.Close() })
	}
	mem := newBackend("zkmem", root, memConns, func(context.Context) (int64, error) { return memSrv.LastZxid(), nil })
	real := newBackend("real", root, realConns, srv.LastZxid)
	for _, b := range []*backend{mem, real} {
		if err := b.createRoot(ctx); err != nil {
			rt.Fatal(err)
		}
	}

	gen := newGenerator(root, oracle)
	var (
		book    watchBook
		history []string
	)
	fail := func(format string, args ...any) {
		rt.Fatalf("%s\nsequence so far (zkmem's outcomes):\n  %s", fmt.Sprintf(format, args...), strings.Join(history, "\n  "))
	}
	steps := rapid.IntRange(5, 40).Draw(rt, "steps")
	for i := range steps {
		open := openSessions(mem)
		if len(open) == 0 {
			break
		}
		s := gen.step(rt, open)
		desc := s.describe(root)
		stepCtx, cancel := context.WithTimeout(ctx, stepLimit)
		memOut := s.run(stepCtx, mem)
		realOut := s.run(stepCtx, real)
		memOut.text += " " + mem.zxidAfter(stepCtx)
		realOut.text += " " + real.zxidAfter(stepCtx)
		cancel()
		history = append(history, fmt.Sprintf("%d. %s => %s", i+1, desc, memOut.text))
		rt.Logf("step %d: %s\n  zkmem: %s\n  real:  %s", i+1, desc, memOut.text, realOut.text)
		if memOut.text != realOut.text {
			fail("divergence at step %d: %s\n  zkmem: %s\n  real:  %s", i+1, desc, memOut.text, realOut.text)
		}
		st.step(s.kind, memOut.text)
		gen.learn(s, memOut.created)
		if memOut.watch != nil {
			book.add(s.session, desc, memOut.watch, realOut.watch)
		}
		if s.kind.writes() {
			if diffs := book.check(ctx, mem, real, st); len(diffs) > 0 {
				fail("watch divergence after step %d: %s\n  %s", i+1, desc, strings.Join(diffs, "\n  "))
			}
		}
	}

	// Closing every session ends every pending watch with EventNotWatching.
	mem.closeAll()
	real.closeAll()
	if diffs := book.check(ctx, mem, real, st); len(diffs) > 0 {
		fail("watch divergence after closing every session:\n  %s", strings.Join(diffs, "\n  "))
	}
	if len(book.pending) > 0 {
		fail("%d watches got no event on either backend after Close", len(book.pending))
	}
	_ = oracle.Close()
	st.sequence()
}

func openSessions(b *backend) []int {
	var open []int
	for i, closed := range b.closed {
		if !closed {
			open = append(open, i)
		}
	}
	return open
}
