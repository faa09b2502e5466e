package sim_test

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zksim/zksim/zkwire/jute"
)

// BenchmarkGoZKFloor measures go-zookeeper's own part of a request, with
// no simulator and no server: n *zk.Conn clients, each on an in-memory
// connection whose far end answers every frame at once, in the client's
// Write, with a fixed reply (the handshake's answer, then per op one
// encoded reply, its xid patched). The requests are those of
// BenchmarkScheduleZK's clients (three getData to a setData), taken one at
// a time, as the simulator takes them: a step hands one request to the
// next client (round robin) and waits until the client has its reply.
// One op is one request, not one simulator step (a request is two: apply
// and deliver). The steps run in a synctest bubble, as in the simulator
// (each goroutine switch in a bubble takes the bubble's lock: kind=gozk),
// and outside one (kind=gozk-nobubble). kind=handoff is the same steps
// with clients that do nothing: the cost of handing a request over and
// back, which the simulator's own steps replace; gozk minus handoff is
// go-zookeeper's part of a request (its caller, send and receive
// goroutines, one wake-up each, and its reflection-based codec) and the
// pipe's signal. Compare cpu-ns/request with twice BenchmarkScheduleZK's
// cpu-ns/event at the same n.
//
//	go test -run '^$' -bench 'GoZKFloor' -benchtime 100000x ./sim/
func BenchmarkGoZKFloor(b *testing.B) {
	for _, n := range []int{100} {
		for _, kind := range []string{"gozk", "gozk-nobubble", "handoff"} {
			b.Run(fmt.Sprintf("clients=%d/%s", n, kind), func(b *testing.B) {
				if kind == "gozk-nobubble" {
					benchStepsNoBubble(b, func() (step func(), end func()) { return floorClients(b, n, true) })
					return
				}
				benchStepsPer(b, "request", func(t *testing.T) (step func(), end func()) {
					return floorClients(t, n, kind != "handoff")
				})
			})
		}
	}
}

// floorClients starts n clients, each a goroutine that makes one request
// (on its own *zk.Conn if gozk, none otherwise) each time step hands it
// one, and answers when it has its reply.
func floorClients(t testing.TB, n int, gozk bool) (step func(), end func()) {
	type client struct {
		zc   *zk.Conn
		path string
		go_  chan bool // true: one request; false: stop
		done chan error
	}
	cs := make([]*client, n)
	for i := range cs {
		c := &client{path: fmt.Sprintf("/n%d", i), go_: make(chan bool), done: make(chan error)}
		if gozk {
			zc, events, err := zk.Connect([]string{"127.0.0.1:2181"}, 10*time.Second,
				zk.WithDialer(func(string, string, time.Duration) (net.Conn, error) { return newFloorConn(), nil }),
				zk.WithLogger(discard{}),
				zk.WithMaxBufferSize(64<<10), zk.WithMaxConnBufferSize(64<<10))
			if err != nil {
				t.Error(err)
				return nil, nil
			}
			go func() {
				for range events {
				}
			}()
			c.zc = zc
		}
		cs[i] = c
		go func() {
			for k := 0; <-c.go_; k++ {
				var err error
				switch {
				case c.zc == nil:
				case k%4 == 3:
					_, err = c.zc.Set(c.path, []byte{byte(k)}, -1)
				default:
					_, _, err = c.zc.Get(c.path)
				}
				c.done <- err
			}
		}()
	}
	next := 0
	step = func() {
		c := cs[next]
		next = (next + 1) % n
		c.go_ <- true
		if err := <-c.done; err != nil {
			t.Error(err)
		}
	}
	end = func() {
		for _, c := range cs {
			c.go_ <- false
			if c.zc != nil {
				c.zc.Close()
			}
		}
	}
	return step, end
}

// benchStepsNoBubble is benchStepsPer(b, "request", ...) without the
// bubble: the steps run on the benchmark's goroutine.
func benchStepsNoBubble(b *testing.B, setup func() (step func(), end func())) {
	step, end := setup()
	if end != nil {
		defer end()
	}
	if step == nil {
		return
	}
	start, cpu0 := time.Now(), cpuTime()
	for b.Loop() {
		step()
	}
	el, cpu := time.Since(start), cpuTime()-cpu0
	b.ReportMetric(float64(b.N)/el.Seconds(), "requests/s")
	b.ReportMetric(float64(el.Nanoseconds())/float64(b.N), "ns/request")
	if cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/request")
	}
}

type discard struct{}

func (discard) Printf(string, ...any) {}

// floorConn is a go-zookeeper client's connection to a responder that
// answers each whole frame in the Write that completes it, with a fixed
// reply: the handshake's answer first, then the reply encoded once for
// the frame's op (its xid the frame's). Deadlines are ignored: no read
// waits for long.
type floorConn struct {
	mu        sync.Mutex
	wbuf      []byte // written, not a whole frame yet
	rbuf      []byte // answered; read up to roff
	roff      int
	connected bool
	closed    bool
	readable  chan struct{}
}

func newFloorConn() *floorConn { return &floorConn{readable: make(chan struct{}, 1)} }

// floorReplies are the responder's replies: by op, a whole frame (xid 0).
var floorReplies = func() map[int32][]byte {
	stat := jute.Stat{Czxid: 2, Mzxid: 5, Version: 3, DataLength: 1}
	reply := func(body jute.Record) []byte {
		return jute.AppendReply(nil, jute.ReplyHeader{Zxid: 5}, body)
	}
	return map[int32][]byte{
		jute.OpGetData:      reply(&jute.GetDataResponse{Data: []byte("x"), Stat: stat}),
		jute.OpSetData:      reply(&jute.StatResponse{Stat: stat}),
		jute.OpPing:         reply(nil),
		jute.OpCloseSession: reply(nil),
	}
}()

var floorConnect = jute.AppendFrame(nil, &jute.ConnectResponse{TimeOut: 10000, SessionID: 1, Passwd: make([]byte, 16)})

func (c *floorConn) Write(b []byte) (int, error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return 0, net.ErrClosed
	}
	c.wbuf = append(c.wbuf, b...)
	answered := false
	data := c.wbuf
	for len(data) >= 4 {
		n := int(binary.BigEndian.Uint32(data))
		if len(data) < 4+n {
			break
		}
		body := data[4 : 4+n]
		data = data[4+n:]
		answered = true
		if !c.connected {
			c.connected = true
			c.rbuf = append(c.rbuf, floorConnect...)
			continue
		}
		op := int32(binary.BigEndian.Uint32(body[4:8]))
		r, ok := floorReplies[op]
		if !ok {
			c.mu.Unlock()
			return 0, fmt.Errorf("floorConn: no reply for op %d", op)
		}
		at := len(c.rbuf)
		c.rbuf = append(c.rbuf, r...)
		copy(c.rbuf[at+4:at+8], body[0:4]) // the xid
	}
	c.wbuf = c.wbuf[:copy(c.wbuf, data)] // the part of a frame left, if any
	c.mu.Unlock()
	if answered {
		c.signal()
	}
	return len(b), nil
}

func (c *floorConn) signal() {
	select {
	case c.readable <- struct{}{}:
	default:
	}
}

func (c *floorConn) Read(b []byte) (int, error) {
	for {
		c.mu.Lock()
		switch {
		case c.roff < len(c.rbuf):
			n := copy(b, c.rbuf[c.roff:])
			if c.roff += n; c.roff == len(c.rbuf) {
				c.rbuf, c.roff = c.rbuf[:0], 0
			}
			c.mu.Unlock()
			return n, nil
		case c.closed:
			c.mu.Unlock()
			return 0, io.EOF
		}
		c.mu.Unlock()
		<-c.readable
	}
}

func (c *floorConn) Close() error {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.signal()
	return nil
}

func (c *floorConn) LocalAddr() net.Addr              { return floorAddr{} }
func (c *floorConn) RemoteAddr() net.Addr             { return floorAddr{} }
func (c *floorConn) SetDeadline(time.Time) error      { return nil }
func (c *floorConn) SetReadDeadline(time.Time) error  { return nil }
func (c *floorConn) SetWriteDeadline(time.Time) error { return nil }

type floorAddr struct{}

func (floorAddr) Network() string { return "floor" }
func (floorAddr) String() string  { return "floor" }
