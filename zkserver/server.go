package zkserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Server is a running ZooKeeper started by Start or Shared.
type Server struct {
	addr    string
	logPath string
	proc    *process

	stopOnce sync.Once
}

// Start starts a ZooKeeper for the test and stops it at t.Cleanup. It blocks
// until the server answers `ruok` with `imok` and serves requests (a few
// seconds). It skips the test when
// ZooKeeper or java is missing, unless CI=true, where it fails the test; a
// server that does not come up fails the test with the tail of its log.
func Start(t testing.TB, opts ...Option) *Server {
	t.Helper()
	inst, err := findInstallation()
	if err != nil {
		unavailable(t, err)
		return nil
	}
	s, err := launch(inst, t.TempDir(), buildConfig(opts))
	if err != nil {
		unavailable(t, err)
		return nil
	}
	t.Cleanup(func() {
		s.Stop()
		if t.Failed() {
			// The data directory goes with the test; keep the log.
			kept := keepLog(s.logPath, t.Name())
			t.Logf("zkserver: the server at %s logged to %s; last lines:\n%s", s.addr, kept, s.LogTail(40))
		}
	})
	return s
}

// keepLog copies the log at path to a file in the system's temporary
// directory that outlives the test, and returns its name (or path itself if
// the copy fails).
func keepLog(path, testName string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return path
	}
	f, err := os.CreateTemp("", "zkserver-"+unsafePathChars.ReplaceAllString(testName, "-")+"-*.log")
	if err != nil {
		return path
	}
	defer f.Close()
	if _, err := f.Write(data); err != nil {
		return path
	}
	return f.Name()
}

// Addr returns the server's client address, "127.0.0.1:port" ("[::1]:port"
// with WithClientPortAddress("::1")).
func (s *Server) Addr() string { return s.addr }

// LogPath returns the file that holds the server's output.
func (s *Server) LogPath() string { return s.logPath }

// LogTail returns the last n lines of the server's log.
func (s *Server) LogTail(n int) string { return tailFile(s.logPath, n) }

// FourLetterWord sends a four-letter-word command to the server; see the
// package function FourLetterWord.
func (s *Server) FourLetterWord(ctx context.Context, cmd string) (string, error) {
	return FourLetterWord(ctx, s.addr, cmd)
}

// Stop kills the server and waits until its process is gone. Clients see
// their connections drop. Stop is idempotent; Start calls it at cleanup.
func (s *Server) Stop() {
	s.stopOnce.Do(s.proc.kill)
}

// launch writes a configuration under dir and starts the server, retrying
// with another port when the chosen one was taken meanwhile.
func launch(inst installation, dir string, cfg config) (*Server, error) {
	logPath := filepath.Join(dir, "zookeeper.log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer logFile.Close() // the child has its own descriptor
	const attempts = 3
	for attempt := 1; ; attempt++ {
		s, err := launchOnce(inst, dir, logFile, cfg)
		if err == nil {
			return s, nil
		}
		if attempt == attempts || !strings.Contains(tailFile(logPath, 200), "Address already in use") {
			return nil, fmt.Errorf("%w\nserver log %s, last lines:\n%s", err, logPath, tailFile(logPath, 40))
		}
	}
}

func launchOnce(inst installation, dir string, logFile *os.File, cfg config) (*Server, error) {
	port, err := freePort(cfg.host)
	if err != nil {
		return nil, err
	}
	dataDir := filepath.Join(dir, "data")
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return nil, err
	}
	cfgPath := filepath.Join(dir, "zoo.cfg")
	if err := os.WriteFile(cfgPath, []byte(zooCfg(dataDir, port, cfg)), 0o644); err != nil {
		return nil, err
	}
	if cfg.saslUsers != nil {
		props, err := writeJAAS(dir, cfg.saslUsers)
		if err != nil {
			return nil, err
		}
		cfg.sysProps = append(props, cfg.sysProps...)
	}
	addr := net.JoinHostPort(cfg.host, strconv.Itoa(port))
	fmt.Fprintf(logFile, "zkserver: starting on %s at %s\n", addr, time.Now().Format(time.RFC3339Nano))
	proc, err := startProcess(inst.java, jvmArgs(inst, cfgPath, cfg), dir, logFile)
	if err != nil {
		return nil, fmt.Errorf("zkserver: start %s: %w", inst.java, err)
	}
	s := &Server{addr: addr, logPath: logFile.Name(), proc: proc}
	if err := waitReady(s, cfg.startTimeout); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

func zooCfg(dataDir string, port int, cfg config) string {
	lines := []string{
		"tickTime=100",
		"initLimit=10",
		"syncLimit=5",
		"dataDir=" + dataDir,
		"clientPort=" + strconv.Itoa(port),
		"clientPortAddress=" + cfg.host,
		"maxClientCnxns=0",
		"4lw.commands.whitelist=*",
		"admin.enableServer=false",
	}
	lines = append(lines, cfg.cfgLines...)
	return strings.Join(lines, "\n") + "\n"
}

func jvmArgs(inst installation, cfgPath string, cfg config) []string {
	args := []string{
		"-Xmx" + cfg.heap,
		"-Xms32m",
		"-XX:+UseSerialGC",
		"-Djava.net.preferIPv4Stack=" + strconv.FormatBool(!strings.Contains(cfg.host, ":")),
		"-Djava.awt.headless=true",
		"-Dzookeeper.extendedTypesEnabled=true",
		"-Dznode.container.checkIntervalMs=100",
		"-Dzookeeper.admin.enableServer=false",
		"-Dzookeeper.4lw.commands.whitelist=*",
		"-Dorg.slf4j.simpleLogger.showDateTime=true",
		"-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS",
	}
	args = append(args, cfg.sysProps...)
	return append(args, "-cp", inst.classpath, "org.apache.zookeeper.server.ZooKeeperServerMain", cfgPath)
}

// freePort asks the kernel for a free port on host. Another process may
// take it before ZooKeeper binds it; launch retries then.
func freePort(host string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitReady polls until the server serves requests, the process exits, or
// the timeout passes. `ruok` answers `imok` as soon as the server listens,
// which is a little before it accepts sessions, so readiness is `srvr`
// reporting a mode (it says "not currently serving requests" until then).
func waitReady(s *Server, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	poll := time.NewTicker(50 * time.Millisecond)
	defer poll.Stop()
	var lastErr error
	for {
		attempt, cancelAttempt := context.WithTimeout(ctx, time.Second)
		lastErr = serving(attempt, s.addr)
		cancelAttempt()
		if lastErr == nil {
			return nil
		}
		select {
		case <-s.proc.exited:
			return fmt.Errorf("zkserver: the server exited before serving on %s: %v", s.addr, s.proc.waitErr)
		case <-ctx.Done():
			return fmt.Errorf("zkserver: %s not serving within %v (last answer: %v)", s.addr, timeout, lastErr)
		case <-poll.C:
		}
	}
}

// serving returns nil when the server at addr answers `ruok` with `imok`
// and `srvr` with its mode.
func serving(ctx context.Context, addr string) error {
	answer, err := FourLetterWord(ctx, addr, "ruok")
	if err != nil {
		return err
	}
	if answer != "imok" {
		return fmt.Errorf("ruok answered %q", answer)
	}
	answer, err = FourLetterWord(ctx, addr, "srvr")
	if err != nil {
		return err
	}
	if !strings.Contains(answer, "Mode: ") {
		return fmt.Errorf("srvr answered %q", strings.TrimSpace(answer))
	}
	return nil
}

// tailFile returns the last n lines of the file at path, or a note saying
// why it cannot.
func tailFile(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "(no log)"
		}
		return "(cannot read the log: " + err.Error() + ")"
	}
	data = bytes.TrimRight(data, "\n")
	lines := bytes.Split(data, []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}
