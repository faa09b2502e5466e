package zkserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Ensemble is a running ZooKeeper ensemble of several members on loopback,
// started by StartEnsemble. Members are numbered from 0; member i has myid
// i+1. Its methods are safe for concurrent use.
//
// The members reach each other only through links the Ensemble owns (one
// per ordered pair of members and port: quorum and election), which is how
// [Ensemble.Isolate] cuts a member off and [Ensemble.Lag] makes one fall
// behind; clients reach the members directly ([Ensemble.Addr]) or through
// a [Router].
type Ensemble struct {
	inst    installation
	cfg     config
	members []*member
	// quorum[i][j] and election[i][j] are member i's way to member j's
	// quorum and election ports; nil when i == j.
	quorum, election [][]*link
	startup          time.Duration

	mu      sync.Mutex
	stopped bool
	routers []*Router
}

// member is one server of an ensemble.
type member struct {
	dir, cfgPath, logPath                string
	clientPort, quorumPort, electionPort int

	mu    sync.Mutex
	proc  *process // nil while crashed
	extra []string // zoo.cfg lines of this member only (SetMemberConfig)
}

// Ensemble defaults, on top of the standalone ones (see the package doc).
const (
	ensembleHeap = "128m"
	// ensembleSyncLimit ticks is how long a follower waits for its leader
	// (and the leader for a follower's acks) before giving up on it: the
	// longest Lag a member survives without leaving the quorum (5s at the
	// default tickTime of 100ms).
	ensembleSyncLimit = 50
	// ensembleInitLimit ticks bound a follower's first sync with its
	// leader; generous, since members start together on a busy machine.
	ensembleInitLimit = 100
)

// StartEnsemble starts an ensemble of n members (n ≥ 1; 3 or 5 for a
// useful quorum) for the test and stops it at t.Cleanup. It blocks until
// every member serves and one of them leads. Options apply to every
// member, as for Start (WithClientPortAddress and WithSASLUsers are not
// supported). It skips the test when ZooKeeper or java is missing, unless
// CI=true, where it fails it; an ensemble that does not come up fails the
// test with the tail of each member's log.
//
// Every member runs with the standalone defaults (tickTime=100,
// 4lw.commands.whitelist=*, ...) and, in addition, initLimit=100,
// syncLimit=50, readonlymode.enabled=true (a member cut off from the
// quorum serves read-only clients), zookeeper.forceSync=no, a 128 MB heap,
// the client JIT only (-XX:TieredStopAtLevel=1) and a leader election that
// retries at least every second.
func StartEnsemble(t testing.TB, n int, opts ...Option) *Ensemble {
	t.Helper()
	if n < 1 {
		t.Fatalf("zkserver: an ensemble of %d members", n)
	}
	inst, err := findInstallation()
	if err != nil {
		unavailable(t, err)
		return nil
	}
	cfg := defaultConfig()
	cfg.heap = ensembleHeap
	for _, opt := range opts {
		opt(&cfg)
	}
	if cfg.host != "127.0.0.1" || cfg.saslUsers != nil {
		t.Fatalf("zkserver: StartEnsemble supports neither WithClientPortAddress nor WithSASLUsers")
	}
	e, err := launchEnsemble(inst, t.TempDir(), n, cfg)
	if err != nil {
		unavailable(t, err)
		return nil
	}
	t.Cleanup(func() {
		e.Stop()
		if t.Failed() {
			for i, m := range e.members {
				kept := keepLog(m.logPath, fmt.Sprintf("%s-member%d", t.Name(), i))
				t.Logf("zkserver: ensemble member %d logged to %s; last lines:\n%s", i, kept, tailFile(m.logPath, 15))
			}
		}
	})
	return e
}

// launchEnsemble starts the members, retrying with other ports when one
// was taken meanwhile.
func launchEnsemble(inst installation, dir string, n int, cfg config) (*Ensemble, error) {
	const attempts = 3
	for attempt := 1; ; attempt++ {
		adir := filepath.Join(dir, "attempt"+strconv.Itoa(attempt))
		e, err := launchEnsembleOnce(inst, adir, n, cfg)
		if err == nil {
			return e, nil
		}
		portTaken := false
		if e != nil {
			for _, m := range e.members {
				portTaken = portTaken || strings.Contains(tailFile(m.logPath, 400), "Address already in use")
			}
			e.Stop()
		}
		if attempt == attempts || !portTaken {
			return nil, err
		}
	}
}

// launchEnsembleOnce starts the ensemble; on an error after the first
// process started it also returns the ensemble, for the caller to read the
// logs and stop it.
func launchEnsembleOnce(inst installation, dir string, n int, cfg config) (*Ensemble, error) {
	start := time.Now()
	e := &Ensemble{inst: inst, cfg: cfg, members: make([]*member, n)}
	for i := range e.members {
		m := &member{dir: filepath.Join(dir, "member"+strconv.Itoa(i))}
		if err := os.MkdirAll(filepath.Join(m.dir, "data"), 0o755); err != nil {
			return nil, err
		}
		m.cfgPath = filepath.Join(m.dir, "zoo.cfg")
		m.logPath = filepath.Join(m.dir, "zookeeper.log")
		for _, port := range []*int{&m.clientPort, &m.quorumPort, &m.electionPort} {
			p, err := freePort("127.0.0.1")
			if err != nil {
				return nil, err
			}
			*port = p
		}
		myid := strconv.Itoa(i+1) + "\n"
		if err := os.WriteFile(filepath.Join(m.dir, "data", "myid"), []byte(myid), 0o644); err != nil {
			return nil, err
		}
		e.members[i] = m
	}
	if err := e.openLinks(); err != nil {
		e.closeLinks()
		return nil, err
	}
	for i := range e.members {
		if err := e.startMember(i); err != nil {
			return e, err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), cfg.startTimeout)
	defer cancel()
	if err := e.waitAllServing(ctx); err != nil {
		return e, fmt.Errorf("%w\n%s", err, e.logTails(20))
	}
	e.startup = time.Since(start)
	return e, nil
}

// openLinks starts the quorum and election links between every ordered
// pair of members.
func (e *Ensemble) openLinks() error {
	n := len(e.members)
	e.quorum, e.election = make([][]*link, n), make([][]*link, n)
	for i := range n {
		e.quorum[i], e.election[i] = make([]*link, n), make([]*link, n)
		for j := range n {
			if i == j {
				continue
			}
			q, err := listenLink(e.members[j].hostPort(e.members[j].quorumPort))
			if err != nil {
				return err
			}
			e.quorum[i][j] = q
		}
	}
	// The election links rewrite the address a member announces to the
	// link back, which must exist first.
	for i := range n {
		for j := range n {
			if i == j {
				continue
			}
			el, err := listenLink(e.members[j].hostPort(e.members[j].electionPort))
			if err != nil {
				return err
			}
			e.election[i][j] = el
		}
	}
	for i := range n {
		for j := range n {
			if i != j {
				e.election[i][j].setRewrite(rewriteElectionAddr(e.election[j][i].addr()))
			}
		}
	}
	return nil
}

func (m *member) hostPort(port int) string { return "127.0.0.1:" + strconv.Itoa(port) }

func (e *Ensemble) closeLinks() {
	for _, row := range append(e.quorum, e.election...) {
		for _, l := range row {
			if l != nil {
				l.close()
			}
		}
	}
}

// zooCfg is member i's configuration: its own ports, and the links to the
// others as their addresses.
func (e *Ensemble) zooCfg(i int) string {
	m := e.members[i]
	lines := []string{
		"tickTime=100",
		"initLimit=" + strconv.Itoa(ensembleInitLimit),
		"syncLimit=" + strconv.Itoa(ensembleSyncLimit),
		"dataDir=" + filepath.Join(m.dir, "data"),
		"clientPort=" + strconv.Itoa(m.clientPort),
		"clientPortAddress=127.0.0.1",
		"maxClientCnxns=0",
		"4lw.commands.whitelist=*",
		"admin.enableServer=false",
	}
	for j, o := range e.members {
		q, el := o.hostPort(o.quorumPort), o.hostPort(o.electionPort)
		if j != i && !e.cfg.direct {
			q, el = e.quorum[i][j].addr(), e.election[i][j].addr()
		}
		lines = append(lines, fmt.Sprintf("server.%d=%s:%s", j+1, q, strings.TrimPrefix(el, "127.0.0.1:")))
	}
	lines = append(lines, e.cfg.cfgLines...)
	return strings.Join(lines, "\n") + "\n"
}

func (e *Ensemble) jvmArgs(i int) []string {
	args := []string{
		"-Xmx" + e.cfg.heap,
		"-Xms16m",
		"-XX:+UseSerialGC",
		"-XX:TieredStopAtLevel=1",
		"-XX:-UsePerfData",
		"-Djava.net.preferIPv4Stack=true",
		"-Djava.awt.headless=true",
		"-Dzookeeper.extendedTypesEnabled=true",
		"-Dznode.container.checkIntervalMs=100",
		"-Dzookeeper.admin.enableServer=false",
		"-Dzookeeper.4lw.commands.whitelist=*",
		"-Dreadonlymode.enabled=true",
		"-Dzookeeper.forceSync=no",
		"-Dzookeeper.fastleader.maxNotificationInterval=1000",
		"-Dorg.slf4j.simpleLogger.showDateTime=true",
		"-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS",
	}
	args = append(args, e.cfg.sysProps...)
	return append(args, "-cp", e.inst.classpath, "org.apache.zookeeper.server.quorum.QuorumPeerMain", e.members[i].cfgPath)
}

// startMember writes member i's configuration and launches its JVM; it
// does not wait for it to serve.
func (e *Ensemble) startMember(i int) error {
	m := e.members[i]
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.proc != nil {
		return fmt.Errorf("zkserver: member %d is running", i)
	}
	cfg := e.zooCfg(i) + strings.Join(append(m.extra, ""), "\n")
	if err := os.WriteFile(m.cfgPath, []byte(cfg), 0o644); err != nil {
		return err
	}
	logFile, err := os.OpenFile(m.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logFile.Close()
	fmt.Fprintf(logFile, "zkserver: starting member %d (myid %d) on %s at %s\n", i, i+1, e.Addr(i), time.Now().Format(time.RFC3339Nano))
	proc, err := startProcess(e.inst.java, e.jvmArgs(i), m.dir, logFile)
	if err != nil {
		return fmt.Errorf("zkserver: start %s: %w", e.inst.java, err)
	}
	m.proc = proc
	return nil
}

// Size returns the number of members.
func (e *Ensemble) Size() int { return len(e.members) }

// Addr returns member i's client address, "127.0.0.1:port".
func (e *Ensemble) Addr(i int) string { return e.members[i].hostPort(e.members[i].clientPort) }

// Addrs returns every member's client address, in member order.
func (e *Ensemble) Addrs() []string {
	out := make([]string, len(e.members))
	for i := range out {
		out[i] = e.Addr(i)
	}
	return out
}

// StartupTime returns how long StartEnsemble took to bring the ensemble up
// (the last attempt, when a port clash made it retry).
func (e *Ensemble) StartupTime() time.Duration { return e.startup }

// LogPath returns the file that holds member i's output.
func (e *Ensemble) LogPath(i int) string { return e.members[i].logPath }

// LogTail returns the last n lines of member i's log.
func (e *Ensemble) LogTail(i, n int) string { return tailFile(e.members[i].logPath, n) }

func (e *Ensemble) logTails(n int) string {
	var b strings.Builder
	for i, m := range e.members {
		fmt.Fprintf(&b, "member %d (%s), last lines:\n%s\n", i, m.logPath, tailFile(m.logPath, n))
	}
	return b.String()
}

// FourLetterWord sends a four-letter word to member i; see the package
// function FourLetterWord.
func (e *Ensemble) FourLetterWord(ctx context.Context, i int, cmd string) (string, error) {
	return FourLetterWord(ctx, e.Addr(i), cmd)
}

// Stop kills every member, closes the links and routers, and waits until
// the processes are gone. It is idempotent; StartEnsemble calls it at
// cleanup.
func (e *Ensemble) Stop() {
	e.mu.Lock()
	if e.stopped {
		e.mu.Unlock()
		return
	}
	e.stopped = true
	routers := e.routers
	e.mu.Unlock()
	for i := range e.members {
		e.Crash(i)
	}
	for _, r := range routers {
		r.Close()
	}
	e.closeLinks()
}

// Crash kills member i (SIGKILL) and waits until its process is gone. Its
// clients see their connections drop; the others see it leave. Crashing a
// crashed member does nothing.
func (e *Ensemble) Crash(i int) {
	m := e.members[i]
	m.mu.Lock()
	proc := m.proc
	m.proc = nil
	m.mu.Unlock()
	if proc != nil {
		proc.kill()
	}
}

// Running reports whether member i's process runs (it was not crashed, or
// was restarted since).
func (e *Ensemble) Running(i int) bool {
	m := e.members[i]
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.proc != nil
}

// SetMemberConfig sets zoo.cfg lines ("key=value") that member i alone
// gets, after every other line, from its next Restart on; it replaces the
// lines an earlier call set. It is how a test restarts a member with
// another setting (say localSessionsEnabled=true, without which a ZooKeeper
// 3.8 member in read-only mode creates no session).
func (e *Ensemble) SetMemberConfig(i int, lines ...string) {
	m := e.members[i]
	m.mu.Lock()
	defer m.mu.Unlock()
	m.extra = append([]string(nil), lines...)
}

// Restart starts crashed member i again on its data directory and ports,
// and blocks until it reports one of modes, by default leader or follower
// (it has rejoined a quorum and caught up), or ctx is done. An isolated
// member comes back in ModeReadOnly.
func (e *Ensemble) Restart(ctx context.Context, i int, modes ...string) error {
	if len(modes) == 0 {
		modes = []string{ModeLeader, ModeFollower}
	}
	e.mu.Lock()
	stopped := e.stopped
	e.mu.Unlock()
	if stopped {
		return errors.New("zkserver: the ensemble is stopped")
	}
	if err := e.startMember(i); err != nil {
		return err
	}
	if err := e.WaitMode(ctx, i, modes...); err != nil {
		return fmt.Errorf("%w\nmember %d, last lines:\n%s", err, i, e.LogTail(i, 20))
	}
	return nil
}

// waitAllServing blocks until every member serves, one of them as the
// leader.
func (e *Ensemble) waitAllServing(ctx context.Context) error {
	for i := range e.members {
		if err := e.WaitMode(ctx, i, ModeLeader, ModeFollower); err != nil {
			return err
		}
	}
	_, err := e.Leader(ctx)
	return err
}
