package clients_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/gozk"
	"github.com/zksim/zksim/recipes/election"
	"github.com/zksim/zksim/recipes/lock"
)

// An interop case: zksim's recipe, with the layout of another library,
// and that library's recipe, take turns on one path. Curator's and
// kazoo's recipes of one kind cannot share a path (each orders the other's
// nodes wrongly, or not at all, and kazoo's Semaphore lives in other
// nodes than Curator's), so each case pairs zksim with one of them.
type interopCase struct {
	name string // subtest name
	lib  string // "curator" or "kazoo"
	kind string // the program's kind argument
	take goTake // zksim's side
}

// A goTake takes one hold of zksim's recipe on path and returns its node,
// the prefix of its mark ("x-", "r-", "w-", "s-") and how to release it.
type goTake func(ctx context.Context, conn zksim.Conn, path string, rnd *rand.Rand) (node, prefix string, release func(context.Context) error, err error)

// faultEvery is how often a fault is injected into one of the sessions,
// per library: ZooKeeper's Java client waits up to a second before it
// reconnects, and Curator backs off, so Curator's sessions must be faulted
// less often than kazoo's to make progress.
var faultEvery = map[string]time.Duration{"curator": time.Second, "kazoo": 400 * time.Millisecond}

// minFaults is how many faults all cases together must see against the
// wire server: one per case on average (a quick case may see none). It
// is a floor that says faults struck, not a rate: the cases take as long
// as the other library's holds do, so an idle machine sees fewer faults
// than a loaded one (14 to 136 in one day's CI runs).
const minFaults = 9

// interopLeases is the size of the semaphores on both sides.
const interopLeases = 2

func takeMutex(l lock.Layout) goTake {
	return func(ctx context.Context, conn zksim.Conn, path string, _ *rand.Rand) (string, string, func(context.Context) error, error) {
		m := lock.New(conn, path, lock.WithLayout(l))
		if err := m.Lock(ctx); err != nil {
			return "", "", nil, err
		}
		return m.Key(), "x-", m.Unlock, nil
	}
}

func takeRW(l lock.Layout) goTake {
	return func(ctx context.Context, conn zksim.Conn, path string, rnd *rand.Rand) (string, string, func(context.Context) error, error) {
		rw := lock.NewRWMutex(conn, path, lock.WithLayout(l))
		if rnd.IntN(4) == 0 {
			if err := rw.Lock(ctx); err != nil {
				return "", "", nil, err
			}
			return rw.Writer().Key(), "w-", rw.Unlock, nil
		}
		if err := rw.RLock(ctx); err != nil {
			return "", "", nil, err
		}
		return rw.Reader().Key(), "r-", rw.RUnlock, nil
	}
}

func takeSemaphore(l lock.Layout) goTake {
	return func(ctx context.Context, conn zksim.Conn, path string, _ *rand.Rand) (string, string, func(context.Context) error, error) {
		s, err := lock.NewSemaphore(conn, path, interopLeases, lock.WithLayout(l))
		if err != nil {
			return "", "", nil, err
		}
		lease, err := s.Acquire(ctx)
		if err != nil {
			return "", "", nil, err
		}
		return lease.Key(), "s-", lease.Release, nil
	}
}

func takeLeadership(l election.Layout) goTake {
	return func(ctx context.Context, conn zksim.Conn, path string, _ *rand.Rand) (string, string, func(context.Context) error, error) {
		e := election.New(conn, path, election.WithLayout(l))
		if err := e.Campaign(ctx, []byte("go")); err != nil {
			return "", "", nil, err
		}
		return e.Key(), "x-", e.Resign, nil
	}
}

var interopCases = []interopCase{
	{"Mutex/InterProcessMutex", "curator", "mutex", takeMutex(lock.Curator)},
	{"Mutex/kazoo.Lock", "kazoo", "mutex", takeMutex(lock.Kazoo)},
	{"RWMutex/InterProcessReadWriteLock", "curator", "rw", takeRW(lock.Curator)},
	{"RWMutex/kazoo.ReadLock+WriteLock", "kazoo", "rw", takeRW(lock.Kazoo)},
	{"Semaphore/InterProcessSemaphoreV2", "curator", "semaphore", takeSemaphore(lock.Curator)},
	{"Semaphore/kazoo.Semaphore", "kazoo", "semaphore", takeSemaphore(lock.Kazoo)},
	{"Election/LeaderLatch", "curator", "latch", takeLeadership(election.CuratorLatch)},
	{"Election/LeaderSelector", "curator", "selector", takeLeadership(election.CuratorSelector)},
	{"Election/kazoo.Election", "kazoo", "election", takeLeadership(election.Kazoo)},
}

// interopTally counts what the holders of one side saw.
type interopTally struct{ holds, lost, timeouts, violations atomic.Int64 }

var programDone = regexp.MustCompile(`(?m)^DONE holds=(\d+) lost=(\d+) timeouts=(\d+) violations=(\d+)$`)

// TestInterop runs every case against zksim's wire server with faults
// (each side takes interopHolds holds, with two clients) and against the
// real ZooKeeper without (fewer holds): no two holders may hold at once,
// and in all at least 1,000 holds are taken against the wire server.
func TestInterop(t *testing.T) {
	needKazoo(t)
	needJDK(t)
	classes := compileInterop(t)
	forEachBackend(t, func(t *testing.T, b backend) {
		// The other side's holds per case: kazoo is quick, a JVM and
		// Curator's reconnections are slow.
		holds := map[string]int{"curator": 20, "kazoo": 40}
		if b.control == "" {
			holds = map[string]int{"curator": 20, "kazoo": 20}
		}
		var total, faults int
		for i, c := range interopCases {
			t.Run(c.name, func(t *testing.T) {
				n, f := runInteropCase(t, b, classes, c, fmt.Sprintf("/interop/%d", i), holds[c.lib])
				total, faults = total+int(n), faults+f
			})
		}
		t.Logf("%d holds and %d faults in all against %s", total, faults, b.name)
		if b.control != "" && !t.Failed() && (total < 1000 || faults < minFaults) {
			t.Fatalf("%d holds and %d faults in all against %s, want at least 1000 and %d", total, faults, b.name, minFaults)
		}
	})
}

// goSessions are the sessions of the Go holders' go-zookeeper clients.
// The faults spare them everything but expiry: go-zookeeper v1.0.4 reads
// its last zxid for setWatches on a reconnection while its new receive
// loop writes it (conn.go, sendSetWatches against recvLoop), a data race
// in the library that -race reports whenever a client with watches
// reconnects to its session while replies come in. An expiry gives the
// client a new session and no setWatches; the Go recipes' behaviour
// under disconnections and lost replies is the simulator's to explore.
type goSessions struct{ ids sync.Map }

func (g *goSessions) add(id int64) { g.ids.Store(id, true) }
func (g *goSessions) has(id int64) bool {
	_, ok := g.ids.Load(id)
	return ok
}

// runInteropCase runs one case: two Go clients and the other library's
// program (two clients) take holds on path at once while faults are
// injected; it returns the number of holds taken.
func runInteropCase(t *testing.T, b backend, classes string, c interopCase, path string, holds int) (taken int64, faults int) {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	owners := path + "-owners"
	admin, err := gozk.Connect(ctx, []string{b.addr})
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	for _, p := range []string{"/interop", owners} {
		if _, err := admin.Create(ctx, p, nil, zksim.ModePersistent, zksim.OpenACL()); err != nil && !errors.Is(err, zksim.ErrNodeExists) {
			t.Fatal(err)
		}
	}
	var tally interopTally
	var gos goSessions
	var wg sync.WaitGroup
	theirsDone := make(chan struct{})
	for i := range 2 {
		wg.Go(func() { goHolder(ctx, t, b.addr, c, path, owners, i, holds/2, theirsDone, &tally, &gos) })
	}
	goDone := make(chan struct{})
	go func() { wg.Wait(); close(goDone) }()
	defer func() { cancel(); <-goDone }() // when the program fails too
	stopFaults := func() int { return 0 }
	if b.control != "" {
		// Faults while both sides take turns.
		stopFaults = injectFaults(t, b.control, faultEvery[c.lib], admin.SessionID(), &gos, goDone)
		defer stopFaults()
	}
	var r result
	if c.lib == "curator" {
		r = runWithin(t, 2*time.Minute, b, ".", "java", "-cp", curatorClasspath(classes), "CuratorInterop",
			c.kind, path, owners, strconv.Itoa(holds), "j")
	} else {
		r = runWithin(t, 2*time.Minute, b, "testdata", python, "kazoo_interop.py",
			c.kind, path, owners, strconv.Itoa(holds), "k")
	}
	close(theirsDone)
	<-goDone
	faults = stopFaults()
	m := programDone.FindStringSubmatch(r.stdout)
	if r.code != 0 || m == nil || strings.Contains(r.stdout, "ERROR") {
		t.Fatalf("%s program failed:\n%s", c.lib, r)
	}
	theirs, _ := strconv.ParseInt(m[1], 10, 64)
	t.Logf("%d faults; go: holds=%d lost=%d timeouts=%d violations=%d; %s: %s", faults,
		tally.holds.Load(), tally.lost.Load(), tally.timeouts.Load(), tally.violations.Load(), c.lib, m[0])
	if v := tally.violations.Load(); v != 0 || m[4] != "0" {
		t.Errorf("holders overlapped: %d times seen from Go, %s from %s:\n%s", v, m[4], c.lib, r)
	}
	if tally.holds.Load() == 0 || theirs == 0 {
		t.Errorf("a side never held: go %d, %s %d", tally.holds.Load(), c.lib, theirs)
	}
	return tally.holds.Load() + theirs, faults
}

// goHolder takes holds of c's recipe on path with one gozk client,
// starting a new session when its session expires: at least n, and on
// until theirs is closed (the other side is done), so that both sides
// take turns for the whole run.
func goHolder(ctx context.Context, t *testing.T, addr string, c interopCase, path, owners string, me, n int, theirs <-chan struct{}, tally *interopTally, gos *goSessions) {
	rnd := rand.New(rand.NewPCG(uint64(me), uint64(time.Now().UnixNano())))
	var conn *gozk.Conn
	defer func() {
		if conn != nil {
			conn.Close()
		}
	}()
	for k := 0; ctx.Err() == nil; k++ {
		if k >= n {
			select {
			case <-theirs:
				return
			default:
			}
		}
		if conn == nil || conn.State() == zksim.StateExpired || conn.State() == zksim.StateClosed {
			if conn != nil {
				conn.Close()
			}
			var err error
			if conn, err = gozk.Connect(ctx, []string{addr}, gozk.WithSessionTimeout(4*time.Second)); err != nil {
				t.Errorf("go client %d: %v", me, err)
				return
			}
		}
		gos.add(conn.SessionID())
		actx, cancel := context.WithTimeout(ctx, 10*time.Second)
		node, prefix, release, err := c.take(actx, conn, path, rnd)
		cancel()
		switch {
		case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
			tally.timeouts.Add(1)
			t.Logf("go client %d: no hold in 10s: %s", me, describeDir(ctx, conn, path))
			continue
		case errors.Is(err, zksim.ErrSessionExpired) || errors.Is(err, zksim.ErrClosing):
			tally.lost.Add(1)
			continue
		case err != nil:
			t.Errorf("go client %d: take: %v", me, err)
			return
		}
		mark := fmt.Sprintf("%sg-%d-%d", prefix, me, k)
		if err := goMark(ctx, conn, node, owners, mark, tally); err != nil && !retryable(err) {
			t.Errorf("go client %d: mark: %v", me, err)
		}
		if err := release(ctx); err != nil && !retryable(err) {
			t.Errorf("go client %d: release: %v", me, err)
		}
	}
}

// retryable reports whether err ends a session rather than the test.
func retryable(err error) bool {
	return errors.Is(err, zksim.ErrSessionExpired) || errors.Is(err, zksim.ErrClosing)
}

// goMark is the programs' hold: mark the hold of node in owners with a
// multi that checks node, look for a conflicting mark, wait, unmark.
func goMark(ctx context.Context, conn zksim.Conn, node, owners, mark string, tally *interopTally) error {
	p := owners + "/" + mark
	for {
		_, err := conn.Multi(ctx, &zksim.CheckOp{Path: node, Version: -1},
			&zksim.CreateOp{Path: p, Data: []byte(node), Mode: zksim.ModeEphemeral, ACL: zksim.OpenACL()})
		if errors.Is(err, zksim.ErrConnectionLoss) {
			time.Sleep(10 * time.Millisecond)
			continue
		}
		if errors.Is(err, zksim.ErrNoNode) {
			tally.lost.Add(1) // the hold node is gone: the hold was lost
			return nil
		}
		if err != nil && !errors.Is(err, zksim.ErrNodeExists) { // exists: a lost reply, ours
			return err
		}
		break
	}
	tally.holds.Add(1)
	conflict, err := goConflict(ctx, conn, node, owners, mark)
	time.Sleep(2 * time.Millisecond)
	// The mark is ours alone (a unique name): delete it whatever became
	// of the hold.
	if err := retryLoss(func() error { return conn.Delete(ctx, p, -1) }); err != nil && !errors.Is(err, zksim.ErrNoNode) {
		return err
	}
	if conflict != "" {
		tally.violations.Add(1)
		return fmt.Errorf("VIOLATION %s holds with %s", mark, conflict)
	}
	return err
}

// goConflict lists the marks in owners and returns the marks that must not
// be there beside mark, "" when there are none. A mark counts only while
// the hold node it names (its data) exists at the same time as node, as
// one multi of two checks sees them: a client can go on after its hold
// ended as the server sees it (Curator's LeaderLatch deletes its node when
// it reconnects), which is the client's business, not the recipes'.
func goConflict(ctx context.Context, conn zksim.Conn, node, owners, mark string) (string, error) {
	var marks []string
	err := retryLoss(func() (err error) { marks, _, err = conn.Children(ctx, owners); return err })
	if err != nil {
		return "", err
	}
	var live []string
	for _, m := range marks {
		if m == mark || !markConflicts(mark, m) {
			continue
		}
		var theirs []byte
		err := retryLoss(func() (err error) { theirs, _, err = conn.Get(ctx, owners+"/"+m); return err })
		if errors.Is(err, zksim.ErrNoNode) {
			continue
		}
		if err != nil {
			return "", err
		}
		err = retryLoss(func() error {
			_, err := conn.Multi(ctx, &zksim.CheckOp{Path: node, Version: -1}, &zksim.CheckOp{Path: string(theirs), Version: -1})
			return err
		})
		if err == nil {
			live = append(live, m+"="+string(theirs))
		} else if !errors.Is(err, zksim.ErrNoNode) {
			return "", err
		}
	}
	if limit := markLimit(mark); len(live) > limit {
		return fmt.Sprintf("%v (mine %s)", live, node), nil
	}
	return "", nil
}

// retryLoss calls f until it returns something else than a connection
// loss.
func retryLoss(f func() error) error {
	for {
		err := f()
		if !errors.Is(err, zksim.ErrConnectionLoss) {
			return err
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// markConflicts is the programs' rule: whether the mark other counts
// against mark (a reader's against a writer's only; every other).
func markConflicts(mark, other string) bool {
	return !strings.HasPrefix(mark, "r-") || strings.HasPrefix(other, "w-")
}

// markLimit is how many other live holds mark may see: none, but
// interopLeases-1 for a semaphore's lease.
func markLimit(mark string) int {
	if strings.HasPrefix(mark, "s-") {
		return interopLeases - 1
	}
	return 0
}

// injectFaults expires, disconnects or loses the next reply of a random
// session (not spare's; a Go holder's it only expires: see goSessions)
// every faultEvery, through the control endpoint, until until is closed or
// the returned function is called, which returns the number of faults
// injected.
func injectFaults(t *testing.T, control string, every time.Duration, spare int64, gos *goSessions, until <-chan struct{}) (stop func() int) {
	done := make(chan struct{})
	var fired int
	var wg sync.WaitGroup
	wg.Go(func() {
		rnd := rand.New(rand.NewPCG(1, uint64(time.Now().UnixNano())))
		tick := time.NewTicker(every)
		defer tick.Stop()
		ops := []string{"", "create", "multi", "delete", "getChildren", "exists", "getData"}
		for {
			select {
			case <-done:
				return
			case <-until:
				return
			case <-tick.C:
			}
			ids, err := sessionIDs(control)
			if err != nil {
				t.Errorf("faults: %v", err)
				return
			}
			ids = slices.DeleteFunc(ids, func(id int64) bool { return id == spare })
			if len(ids) == 0 {
				continue
			}
			x := rnd.IntN(20)
			if x != 0 { // a connection fault: not on a Go holder's session (see goSessions)
				ids = slices.DeleteFunc(ids, gos.has)
				if len(ids) == 0 {
					continue
				}
			}
			id := ids[rnd.IntN(len(ids))]
			var action string
			switch {
			case x == 0:
				action = "expire"
			case x < 6:
				action = "disconnect"
			default:
				action = "lose-next-reply?op=" + ops[rnd.IntN(len(ops))]
			}
			resp, err := http.Post(fmt.Sprintf("%s/sessions/%d/%s", control, id, action), "", nil)
			if err != nil {
				t.Errorf("faults: %v", err)
				return
			}
			resp.Body.Close()
			switch resp.StatusCode {
			case http.StatusOK:
				fired++
			case http.StatusNotFound: // the session ended meanwhile
			default:
				t.Errorf("faults: %s: %s", action, resp.Status)
				return
			}
		}
	})
	var once sync.Once
	return func() int { once.Do(func() { close(done) }); wg.Wait(); return fired }
}

// sessionIDs lists the server's live sessions through the control endpoint.
func sessionIDs(control string) ([]int64, error) {
	resp, err := http.Get(control + "/sessions")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var sessions []struct {
		ID    int64  `json:"id"`
		State string `json:"state"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&sessions); err != nil {
		return nil, err
	}
	var ids []int64
	for _, s := range sessions {
		if s.State != "expired" && s.State != "closed" { // GET /sessions lists ended ones too
			ids = append(ids, s.ID)
		}
	}
	return ids, nil
}

// interopBuild is the one compilation of CuratorInterop per test binary.
var interopBuild struct {
	once sync.Once
	dir  string
	out  string
	err  error
}

// compileInterop compiles testdata/CuratorInterop.java once and returns
// the classes directory (removed by TestMain through removeJavaBuild's
// sibling, removeInteropBuild).
func compileInterop(t *testing.T) string {
	t.Helper()
	interopBuild.once.Do(func() {
		interopBuild.dir, interopBuild.err = os.MkdirTemp("", "zksim-interop-java-")
		if interopBuild.err != nil {
			return
		}
		out, err := exec.Command("javac", "-d", interopBuild.dir, "-cp", curatorClasspath(),
			"testdata/CuratorInterop.java").CombinedOutput()
		interopBuild.out, interopBuild.err = string(out), err
	})
	if interopBuild.err != nil {
		t.Fatalf("javac: %v\n%s", interopBuild.err, interopBuild.out)
	}
	return interopBuild.dir
}

// removeInteropBuild removes the compiled classes; TestMain calls it.
func removeInteropBuild() {
	if interopBuild.dir != "" {
		_ = os.RemoveAll(interopBuild.dir)
	}
}

// describeDir lists the children of dir with their owners, for a test
// that waited too long.
func describeDir(ctx context.Context, conn zksim.Conn, dir string) string {
	children, _, err := conn.Children(ctx, dir)
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, c := range children {
		_, st, err := conn.Exists(ctx, dir+"/"+c)
		if err == nil && st != nil {
			fmt.Fprintf(&b, "%s (owner %d); ", c, st.EphemeralOwner)
		}
	}
	return b.String()
}

// TestInteropOrder gives Curator's and kazoo's own sorting code the names
// of recipes/internal/seqnode/testdata/order.json, which span the int32
// wrap of the sequence, and checks they order them as that file says, as
// the layouts' own test checks our order: Curator's
// LockInternals.getSortedChildren, and the predecessor kazoo's Lock finds
// for each of its contenders.
func TestInteropOrder(t *testing.T) {
	needKazoo(t)
	needJDK(t)
	classes := compileInterop(t)
	b, err := os.ReadFile("../recipes/internal/seqnode/testdata/order.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases map[string]struct {
		Marker string   `json:"marker"`
		Names  []string `json:"names"`
		Sorted []string `json:"sorted"`
	}
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	none := backend{name: "none"}
	cur := cases["curator"]
	r := run(t, none, ".", "java", append([]string{"-cp", curatorClasspath(classes), "CuratorInterop", "order", cur.Marker}, cur.Names...)...)
	if got := strings.Fields(r.stdout); r.code != 0 || !slices.Equal(got, cur.Sorted) {
		t.Errorf("Curator's order\n got %q\nwant %q\n%s", got, cur.Sorted, r)
	}
	kz := cases["kazoo"]
	r = run(t, none, "testdata", python, append([]string{"kazoo_interop.py", "order"}, kz.Names...)...)
	if r.code != 0 {
		t.Fatalf("kazoo order: %s", r)
	}
	want := map[string]string{}
	for i, n := range kz.Sorted {
		want[n] = "None"
		if i > 0 {
			want[n] = kz.Sorted[i-1]
		}
	}
	for line := range strings.Lines(r.stdout) {
		f := strings.Fields(line)
		if w, ok := want[f[0]]; ok && (len(f) != 2 || f[1] != w) {
			t.Errorf("kazoo: predecessor of %s is %v, want %s", f[0], f[1:], w)
		}
		delete(want, f[0])
	}
	if len(want) != 0 {
		t.Errorf("kazoo printed no predecessor for %v", want)
	}
}
