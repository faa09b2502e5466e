package benchmarks_test

import (
	"bufio"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zksim/zksim/zkserver"
	"github.com/zksim/zksim/zkwire"
	"github.com/zksim/zksim/zkwire/jute"
)

// The wire server's benchmarks: the same go-zookeeper client against the
// wire server, a real ZooKeeper and a floor, in one run:
//
//	go test ./benchmarks/ -run '^$' -bench 'Wire' -benchtime 2s
//
// The floor is "echo": a server on loopback that speaks just enough of the
// protocol (the handshake, then a fixed reply to every request) for
// go-zookeeper to use it, so that it costs the client, the client library
// and TCP and nothing else; "tcp-echo" is a bare 64-byte TCP round trip
// without any client library. benchmarks/RESULTS.md ("Wire server") holds
// the results.

var zkQuiet = zk.WithLogger(log.New(io.Discard, "", 0))

func zkDial(b *testing.B, addr string, timeout time.Duration) *zk.Conn {
	b.Helper()
	c, events, err := zk.Connect([]string{addr}, timeout, zkQuiet)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Close)
	deadline := time.After(20 * time.Second)
	for {
		select {
		case ev := <-events:
			if ev.State == zk.StateHasSession {
				return c
			}
		case <-deadline:
			b.Fatalf("no session with %s", addr)
		}
	}
}

// echoServer answers the handshake, then every request with a fixed,
// valid reply for its op, doing no work.
func echoServer(b *testing.B) string {
	b.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	var wg sync.WaitGroup
	b.Cleanup(func() { ln.Close(); wg.Wait() })
	replies := map[int32][]byte{
		jute.OpGetData: jute.Marshal(nil, &jute.GetDataResponse{Data: []byte("0123456789"), Stat: jute.Stat{DataLength: 10}}),
		jute.OpCreate:  jute.Marshal(nil, &jute.PathRequest{Path: "/bench/x"}),
		jute.OpSetData: jute.Marshal(nil, &jute.StatResponse{}),
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer nc.Close()
				br, bw := bufio.NewReader(nc), bufio.NewWriter(nc)
				if _, err := jute.ReadFrame(br, 1<<20, nil); err != nil {
					return
				}
				bw.Write(jute.AppendFrame(nil, &jute.ConnectResponse{TimeOut: 10000, SessionID: 1, Passwd: make([]byte, 16)}))
				bw.Flush()
				var buf, out []byte
				for {
					buf, err = jute.ReadFrame(br, 1<<20, buf)
					if err != nil {
						return
					}
					d := jute.NewDecoder(buf)
					var h jute.RequestHeader
					h.Decode(d)
					out = jute.AppendFrame(out[:0], &jute.ReplyHeader{Xid: h.Xid, Zxid: 1})
					out = append(out, replies[h.Type]...)
					binaryPutLen(out)
					bw.Write(out)
					if br.Buffered() == 0 {
						bw.Flush()
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

func binaryPutLen(frame []byte) {
	n := len(frame) - 4
	frame[0], frame[1], frame[2], frame[3] = byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
}

type wireBackend struct {
	name string
	addr func(b *testing.B) string
}

func wireBackends() []wireBackend {
	return []wireBackend{
		{"wire", func(b *testing.B) string { return zkwire.NewTestServer(b).Addr() }},
		{"real", func(b *testing.B) string { return zkserver.Shared(b).Addr() }},
		{"echo", echoServer},
	}
}

// BenchmarkWireLatency: one synchronous call at a time, per op.
func BenchmarkWireLatency(b *testing.B) {
	acl := zk.WorldACL(zk.PermAll)
	data := []byte("0123456789")
	for _, op := range []string{"Get", "Create", "Set"} {
		b.Run(op, func(b *testing.B) {
			for _, be := range wireBackends() {
				b.Run(be.name, func(b *testing.B) {
					c := zkDial(b, be.addr(b), 10*time.Second)
					root := fmt.Sprintf("/wirebench-%d", time.Now().UnixNano())
					if be.name != "echo" {
						if _, err := c.Create(root, data, 0, acl); err != nil {
							b.Fatal(err)
						}
					}
					b.ResetTimer()
					switch op {
					case "Get":
						for b.Loop() {
							if _, _, err := c.Get(root); err != nil {
								b.Fatal(err)
							}
						}
					case "Create":
						for b.Loop() {
							if _, err := c.Create(root+"/n-", data, zk.FlagSequence, acl); err != nil {
								b.Fatal(err)
							}
						}
					case "Set":
						for b.Loop() {
							if _, err := c.Set(root, data, -1); err != nil {
								b.Fatal(err)
							}
						}
					}
				})
			}
		})
	}
	b.Run("Get/tcp-echo", func(b *testing.B) {
		addr := echoServer(b)
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			b.Fatal(err)
		}
		defer nc.Close()
		// The echo server answers the first frame with a handshake and
		// every later one with a reply: a 64-byte request, a reply back.
		nc.Write(jute.AppendFrame(nil, &jute.ConnectRequest{Passwd: make([]byte, 16)}))
		br := bufio.NewReader(nc)
		jute.ReadFrame(br, 1<<20, nil)
		req := jute.AppendFrame(nil, &jute.RequestHeader{Xid: 1, Type: jute.OpSetData}, &jute.SetDataRequest{Path: strings.Repeat("p", 40)})
		var buf []byte
		for b.Loop() {
			if _, err := nc.Write(req); err != nil {
				b.Fatal(err)
			}
			if buf, err = jute.ReadFrame(br, 1<<20, buf); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkWireThroughput: many goroutines issue getData at once on one
// go-zookeeper connection, which pipelines them; ops/s is the figure.
func BenchmarkWireThroughput(b *testing.B) {
	for _, be := range wireBackends() {
		for _, conns := range []int{1, 4} {
			b.Run(fmt.Sprintf("%s/conns=%d", be.name, conns), func(b *testing.B) {
				addr := be.addr(b)
				cs := make([]*zk.Conn, conns)
				for i := range cs {
					cs[i] = zkDial(b, addr, 10*time.Second)
				}
				path := "/"
				var next sync.Mutex
				i := 0
				b.SetParallelism(64)
				start := time.Now()
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					next.Lock()
					c := cs[i%conns]
					i++
					next.Unlock()
					for pb.Next() {
						if _, _, err := c.Get(path); err != nil {
							b.Error(err)
							return
						}
					}
				})
				b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "ops/s")
			})
		}
	}
}

// BenchmarkWirePipelined measures the server without a client library's
// limits: one connection, a raw client that keeps up to 512 getData
// requests outstanding, written in batches, and reads the replies.
func BenchmarkWirePipelined(b *testing.B) {
	for _, be := range wireBackends() {
		b.Run(be.name, func(b *testing.B) {
			nc, err := net.Dial("tcp", be.addr(b))
			if err != nil {
				b.Fatal(err)
			}
			defer nc.Close()
			nc.Write(jute.AppendFrame(nil, &jute.ConnectRequest{TimeOut: 30000, Passwd: make([]byte, 16)}))
			br := bufio.NewReaderSize(nc, 64<<10)
			if _, err := jute.ReadFrame(br, 1<<20, nil); err != nil {
				b.Fatal(err)
			}
			const window = 512
			credit := make(chan struct{}, window)
			for i := 0; i < window; i++ {
				credit <- struct{}{}
			}
			n := b.N
			errc := make(chan error, 1)
			go func() {
				var buf []byte
				for i := 0; i < n; i++ {
					var err error
					if buf, err = jute.ReadFrame(br, 1<<20, buf); err != nil {
						errc <- err
						return
					}
					credit <- struct{}{}
				}
				errc <- nil
			}()
			start := time.Now()
			bw := bufio.NewWriterSize(nc, 64<<10)
			var frame []byte
			for i := 0; i < n; i++ {
				select {
				case <-credit:
				default:
					bw.Flush()
					<-credit
				}
				frame = jute.AppendFrame(frame[:0], &jute.RequestHeader{Xid: int32(i + 1), Type: jute.OpGetData}, &jute.PathWatchRequest{Path: "/"})
				bw.Write(frame)
			}
			bw.Flush()
			if err := <-errc; err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(n)/time.Since(start).Seconds(), "ops/s")
		})
	}
}

// BenchmarkWireSessions holds 10,000 sessions open on the wire server,
// their clients in another process (this test binary, re-run), and
// reports the server's memory per session: heap and goroutine stacks in
// use, after minus before.
func BenchmarkWireSessions(b *testing.B) {
	const sessions = 10000
	for b.Loop() {
		srv := zkwire.NewTestServer(b)
		before := memInUse()
		cmd := exec.Command(os.Args[0], "-test.run", "^TestWireSessionClients$")
		cmd.Env = append(os.Environ(), "ZKWIRE_CLIENTS="+srv.Addr()+","+strconv.Itoa(sessions))
		stdin, _ := cmd.StdinPipe()
		out, _ := cmd.StdoutPipe()
		cmd.Stderr = os.Stderr
		start := time.Now()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		line, err := bufio.NewReader(out).ReadString('\n')
		if err != nil || !strings.HasPrefix(line, "ready") {
			b.Fatalf("clients: %q, %v", line, err)
		}
		took := time.Since(start)
		if n := len(srv.SessionIDs()); n != sessions {
			b.Fatalf("%d sessions live, want %d", n, sessions)
		}
		after := memInUse()
		goroutines := runtime.NumGoroutine()
		stdin.Close()
		cmd.Wait()
		b.ReportMetric(float64(after-before)/sessions, "B/session")
		b.ReportMetric(float64(goroutines), "goroutines")
		b.ReportMetric(took.Seconds(), "s-to-open")
	}
}

func memInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse + m.StackInuse
}

// TestWireSessionClients is the client side of BenchmarkWireSessions, run
// in its own process; it does nothing unless ZKWIRE_CLIENTS is set.
func TestWireSessionClients(t *testing.T) {
	spec := os.Getenv("ZKWIRE_CLIENTS")
	if spec == "" {
		t.Skip("the client process of BenchmarkWireSessions")
	}
	addr, count, _ := strings.Cut(spec, ",")
	n, _ := strconv.Atoi(count)
	conns := make([]net.Conn, 0, n)
	req := jute.AppendFrame(nil, &jute.ConnectRequest{TimeOut: 40000, Passwd: make([]byte, 16), HasReadOnly: true})
	for i := 0; i < n; i++ {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := nc.Write(req); err != nil {
			t.Fatal(err)
		}
		if _, err := jute.ReadFrame(nc, 1<<20, nil); err != nil {
			t.Fatal(err)
		}
		conns = append(conns, nc)
	}
	fmt.Println("ready")
	io.Copy(io.Discard, os.Stdin)
	for _, nc := range conns {
		nc.Close()
	}
}

// BenchmarkWireStartup: from nothing to a session established, for the
// in-process listener, the zksim serve command and a real ZooKeeper.
func BenchmarkWireStartup(b *testing.B) {
	b.Run("in-process", func(b *testing.B) {
		for b.Loop() {
			srv, err := zkwire.Start()
			if err != nil {
				b.Fatal(err)
			}
			handshake(b, srv.Addr())
			srv.Close()
		}
	})
	b.Run("zksim-serve", func(b *testing.B) {
		bin := filepath.Join(b.TempDir(), "zksim")
		if out, err := exec.Command("go", "build", "-o", bin, "github.com/zksim/zksim/cmd/zksim").CombinedOutput(); err != nil {
			b.Fatalf("go build: %v\n%s", err, out)
		}
		for b.Loop() {
			cmd := exec.Command(bin, "serve", "-addr", "127.0.0.1:0", "-control", "")
			out, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				b.Fatal(err)
			}
			line, err := bufio.NewReader(out).ReadString('\n')
			if err != nil {
				b.Fatal(err)
			}
			handshake(b, strings.TrimSpace(strings.TrimPrefix(line, "listening on ")))
			b.StopTimer()
			cmd.Process.Kill()
			cmd.Wait()
			b.StartTimer()
		}
	})
	b.Run("real", func(b *testing.B) {
		for b.Loop() {
			srv := zkserver.Start(b)
			handshake(b, srv.Addr())
		}
	})
}

// handshake opens a session by hand: the connect request and its answer.
func handshake(b *testing.B, addr string) {
	b.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	nc.Write(jute.AppendFrame(nil, &jute.ConnectRequest{TimeOut: 10000, Passwd: make([]byte, 16)}))
	if _, err := jute.ReadFrame(nc, 1<<20, nil); err != nil {
		b.Fatal(err)
	}
}
