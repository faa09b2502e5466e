package clients_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// TestZkCli drives zkCli.sh from Debian's zookeeper package.
func TestZkCli(t *testing.T) {
	needZkCli(t)
	forEachBackend(t, func(t *testing.T, b backend) {
		t.Run("commands", func(t *testing.T) { zkCliCommands(t, b) })
		t.Run("watch", func(t *testing.T) { zkCliWatch(t, b) })
		t.Run("script", func(t *testing.T) { zkCliScript(t, b) })
	})
}

// uniquePath is a fresh top-level path for one test.
func uniquePath(prefix string) string {
	return "/" + prefix + "-" + rand.Text()[:10]
}

// cli runs one zkCli.sh command ("zkCli.sh -server ADDR cmd args...").
func cli(t *testing.T, b backend, args ...string) result {
	t.Helper()
	return run(t, b, ".", zkCli, append([]string{"-server", b.addr}, args...)...)
}

// lines splits output into trimmed lines.
func lines(s string) []string {
	var out []string
	for l := range strings.Lines(s) {
		out = append(out, strings.TrimSpace(l))
	}
	return out
}

// lsChildren parses the "[a, b]" line ls prints into sorted names.
func lsChildren(stdout string) []string {
	for _, l := range lines(stdout) {
		if strings.HasPrefix(l, "[") && strings.HasSuffix(l, "]") {
			names := strings.Split(strings.Trim(l, "[]"), ", ")
			if len(names) == 1 && names[0] == "" {
				names = nil
			}
			slices.Sort(names)
			return names
		}
	}
	return nil
}

// goConn opens a go-zookeeper session to the backend, closed at cleanup.
func goConn(t *testing.T, b backend) *zk.Conn {
	t.Helper()
	conn, events, err := zk.Connect([]string{b.addr}, 10*time.Second, zk.WithLogger(quietLogger{}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	deadline := time.After(20 * time.Second)
	for {
		select {
		case ev := <-events:
			if ev.State == zk.StateHasSession {
				go func() { // the channel must be drained until Close
					for range events {
					}
				}()
				return conn
			}
		case <-deadline:
			t.Fatalf("go-zookeeper: no session from %s after 20s", b.addr)
		}
	}
}

// quietLogger drops go-zookeeper's log lines.
type quietLogger struct{}

func (quietLogger) Printf(string, ...any) {}

// zkCliCommands runs create, ls, get, set, delete, each as its own zkCli.sh
// command, and checks the tree through go-zookeeper as well.
func zkCliCommands(t *testing.T, b backend) {
	root := uniquePath("zkcli")
	conn := goConn(t, b)

	if r := cli(t, b, "create", root, "hello"); r.code != 0 || !slices.Contains(lines(r.stdout+r.stderr), "Created "+root) {
		t.Fatalf("create: want \"Created %s\":\n%s", root, r)
	}
	seq := root + "/seq-0000000000" // the parent's first child: counter 0
	if r := cli(t, b, "create", "-s", root+"/seq-", "s"); r.code != 0 || !slices.Contains(lines(r.stdout+r.stderr), "Created "+seq) {
		t.Fatalf("create -s: want \"Created %s\":\n%s", seq, r)
	}
	if r := cli(t, b, "create", root+"/kid", "k"); r.code != 0 {
		t.Fatalf("create child:\n%s", r)
	}
	if r := cli(t, b, "ls", root); r.code != 0 || !slices.Equal(lsChildren(r.stdout), []string{"kid", "seq-0000000000"}) {
		t.Fatalf("ls: want [kid, seq-0000000000] in some order:\n%s", r)
	}
	if r := cli(t, b, "get", root); r.code != 0 || !slices.Contains(lines(r.stdout), "hello") {
		t.Fatalf("get: want hello:\n%s", r)
	}
	if r := cli(t, b, "set", root, "world"); r.code != 0 {
		t.Fatalf("set:\n%s", r)
	}
	r := cli(t, b, "get", "-s", root)
	if out := lines(r.stdout); r.code != 0 || !slices.Contains(out, "world") ||
		!slices.Contains(out, "dataVersion = 1") || !slices.Contains(out, "numChildren = 2") {
		t.Fatalf("get -s: want world, dataVersion = 1, numChildren = 2:\n%s", r)
	}
	data, stat, err := conn.Get(root)
	if err != nil || string(data) != "world" || stat.Version != 1 {
		t.Fatalf("go-zookeeper get %s = %q, version %v, %v; want world, version 1", root, data, stat, err)
	}
	if r := cli(t, b, "delete", root); r.code == 0 || !strings.Contains(r.stderr, "Node not empty: "+root) {
		t.Fatalf("delete a parent: want exit 1 and \"Node not empty\":\n%s", r)
	}
	if r := cli(t, b, "delete", root+"/kid"); r.code != 0 {
		t.Fatalf("delete:\n%s", r)
	}
	if r := cli(t, b, "deleteall", root); r.code != 0 {
		t.Fatalf("deleteall:\n%s", r)
	}
	if r := cli(t, b, "delete", root); r.code == 0 || !strings.Contains(r.stderr, "Node does not exist: "+root) {
		t.Fatalf("delete a deleted node: want exit 1 and \"Node does not exist\":\n%s", r)
	}
	if r := cli(t, b, "get", root); r.code == 0 || !strings.Contains(r.stderr, "Node does not exist: "+root) {
		t.Fatalf("get after delete: want exit 1 and \"Node does not exist\":\n%s", r)
	}
	if ok, _, err := conn.Exists(root); ok || err != nil {
		t.Fatalf("go-zookeeper exists %s = %v, %v after zkCli deleted it", root, ok, err)
	}
}

// zkCliWatch sets data, child and exists watches from an interactive
// zkCli.sh session and fires them from a go-zookeeper client.
func zkCliWatch(t *testing.T, b backend) {
	root := uniquePath("zkcliwatch")
	conn := goConn(t, b)
	if _, err := conn.Create(root, []byte("v0"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = conn.Delete(root+"/c", -1)
		_ = conn.Delete(root+"/later", -1)
		_ = conn.Delete(root, -1)
	})

	ctx, cancel := context.WithTimeout(t.Context(), processTimeout)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, zkCli, "-server", b.addr)
	cmd.Env = b.env()
	cmd.WaitDelay = 5 * time.Second
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	out := make(chan string, 100)
	go func() {
		defer close(out)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			out <- strings.TrimSpace(sc.Text())
		}
	}()
	waited := false
	t.Cleanup(func() { // on failure: kill zkCli.sh, then reap it
		if !waited {
			cancel()
			for range out {
			}
			_ = cmd.Wait()
		}
	})
	var seen []string
	expect := func(want string) {
		t.Helper()
		timeout := time.After(20 * time.Second)
		for {
			select {
			case l, ok := <-out:
				if !ok {
					t.Fatalf("zkCli.sh exited before printing %q; stdout:\n%s\nstderr:\n%s", want, strings.Join(seen, "\n"), filterNoise(stderr.String()))
				}
				seen = append(seen, l)
				if l == want {
					return
				}
			case <-timeout:
				cancel()
				t.Fatalf("zkCli.sh did not print %q within 20s; stdout:\n%s", want, strings.Join(seen, "\n"))
			}
		}
	}
	send := func(line string) {
		t.Helper()
		if _, err := io.WriteString(stdin, line+"\n"); err != nil {
			t.Fatalf("zkCli.sh stdin: %v", err)
		}
	}
	event := func(typ, path string) string {
		return fmt.Sprintf("WatchedEvent state:SyncConnected type:%s path:%s", typ, path)
	}

	expect(event("None", "null")) // connected
	send("get -w " + root)
	expect("v0")
	if _, err := conn.Set(root, []byte("v1"), -1); err != nil {
		t.Fatal(err)
	}
	expect(event("NodeDataChanged", root))

	send("ls -w " + root)
	expect("[]")
	if _, err := conn.Create(root+"/c", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	expect(event("NodeChildrenChanged", root))

	send("stat -w " + root + "/later") // no such node: an exists watch
	send("get " + root)                // a marker: the stat has been answered
	expect("v1")
	if _, err := conn.Create(root+"/later", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	expect(event("NodeCreated", root+"/later"))

	send("quit")
	_ = stdin.Close()
	for l := range out {
		seen = append(seen, l)
	}
	waited = true
	if err := cmd.Wait(); err != nil {
		t.Fatalf("zkCli.sh: %v; stdout:\n%s\nstderr:\n%s", err, strings.Join(seen, "\n"), filterNoise(stderr.String()))
	}
	if !strings.Contains(stderr.String(), "Node does not exist: "+root+"/later") {
		t.Errorf("stat -w on a missing node: want \"Node does not exist\" on stderr:\n%s", filterNoise(stderr.String()))
	}
}

// zkCliScript pipes a script into one zkCli.sh session: containers,
// getAllChildrenNumber, getEphemerals, whoami, addauth with a digest ACL,
// sync, and a persistent recursive watch (addWatch) removed by
// removewatches.
func zkCliScript(t *testing.T, b backend) {
	root := uniquePath("zkcliscript")
	script := strings.Join([]string{
		"create " + root + " a",
		"create -c " + root + "/box",
		"create -e " + root + "/box/e x",
		"create " + root + "/p",
		"getAllChildrenNumber " + root,
		"getEphemerals " + root,
		"whoami",
		"addauth digest bob:pw",
		"setAcl " + root + "/p auth:bob:pw:cdrwa",
		"getAcl " + root + "/p",
		"whoami",
		"sync " + root,
		"addWatch -m PERSISTENT_RECURSIVE " + root,
		"set " + root + "/p q",
		"create " + root + "/p/deep",
		"get " + root + "/p", // a marker: the watch events came before its reply
		"removewatches " + root + " -a",
		"deleteall " + root,
		"ls " + root,
		"ls /zookeeper", // zkCli exits with the status of its last command
		"quit",
	}, "\n") + "\n"
	ctx, cancel := context.WithTimeout(t.Context(), processTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, zkCli, "-server", b.addr)
	cmd.Env = b.env()
	cmd.WaitDelay = 5 * time.Second
	cmd.Stdin = strings.NewReader(script)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("zkCli.sh: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), filterNoise(stderr.String()))
	}
	out := lines(stdout.String() + stderr.String())
	event := func(typ, path string) string {
		return fmt.Sprintf("WatchedEvent state:SyncConnected type:%s path:%s", typ, path)
	}
	for _, want := range []string{
		"Created " + root + "/box",
		"Created " + root + "/box/e",
		"3",                    // getAllChildrenNumber
		"[" + root + "/box/e]", // getEphemerals
		"ip: 127.0.0.1",        // whoami
		"'digest,'bob:ikIaKsbtGweaHnb/jKn7OHqbunM=", // getAcl: bob's digest
		": cdrwa",
		"digest: bob", // whoami after addauth
		"Sync is OK",
		event("NodeDataChanged", root+"/p"),
		event("NodeCreated", root+"/p/deep"),
		event("PersistentWatchRemoved", root),
		"Node does not exist: " + root, // ls after deleteall
	} {
		if !slices.Contains(out, want) {
			t.Errorf("zkCli.sh printed no line %q", want)
		}
	}
	if t.Failed() {
		t.Logf("script:\n%s\nstdout:\n%s\nstderr:\n%s", script, stdout.String(), filterNoise(stderr.String()))
	}
}
