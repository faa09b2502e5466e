package zkwire

import (
	"bufio"
	"errors"
	"net"
	"net/netip"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/zkmem"
	"github.com/zksim/zksim/zkwire/jute"
)

var connSeq atomic.Int64

// conn is one client connection: a reader goroutine that runs requests in
// arrival order and a writer goroutine that sends replies and
// notifications in the order they were queued.
type conn struct {
	srv    *Server
	nc     net.Conn
	br     *bufio.Reader
	seq    int64
	remote string
	from   netip.Addr // the peer's address: the session's "ip" identity
	since  time.Time
	member int // the ensemble member whose port it came to; -1 standalone

	sess atomic.Pointer[session]

	mu        sync.Mutex
	q         []frame
	closing   bool
	inRequest bool // the reader is running a request and drains after it
	wake      chan struct{}

	wmu   sync.Mutex // held while a batch is written
	bw    *bufio.Writer
	batch []frame

	done      chan struct{}
	closeOnce sync.Once

	recv, sent atomic.Int64
	word       atomic.Bool // the connection asked a four-letter word
	stats      cnxnStats

	cur     current // the request the reader is running
	zs      *zkmem.Session
	timeout time.Duration
	rec     *record // the session's, once the handshake is done
	refused error   // why the handshake closed the connection without an answer

	// A connection whose frames its owner carries (see FrameConn): out
	// gets what the server sends, and hook sees each reply first.
	out  FrameOut
	hook func(*zkmem.Request, *zkmem.Response)
}

type frame struct {
	b          []byte
	closeAfter bool
}

func newConn(s *Server, nc net.Conn) *conn {
	c := &conn{
		srv:    s,
		nc:     nc,
		br:     bufio.NewReaderSize(nc, 4<<10),
		seq:    connSeq.Add(1),
		remote: nc.RemoteAddr().String(),
		from:   peerAddr(nc.RemoteAddr()),
		since:  time.Now(),
		member: -1,
		wake:   make(chan struct{}, 1),
		bw:     bufio.NewWriterSize(nc, 4<<10),
		done:   make(chan struct{}),
		stats:  newCnxnStats(),
	}
	return c
}

// close closes the connection at once; queued frames are dropped.
func (c *conn) close() {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closing = true
		c.q = nil
		c.mu.Unlock()
		close(c.done)
		if c.out != nil {
			c.out.Close()
			return
		}
		c.nc.Close()
	})
}

// enqueue queues a frame for the writer. It never blocks: it is called with
// zkmem's lock held. closeAfter closes the connection once the frame is
// written.
func (c *conn) enqueue(b []byte, closeAfter bool) {
	if c.out != nil {
		c.enqueueFrame(b, closeAfter)
		return
	}
	c.mu.Lock()
	if c.closing {
		c.mu.Unlock()
		return
	}
	c.q = append(c.q, frame{b: b, closeAfter: closeAfter})
	if closeAfter {
		c.closing = true // nothing after the last frame
	}
	// While the reader runs a request it sends what is queued itself when
	// done (see drain): no goroutine to wake for a reply.
	wake := !c.inRequest
	c.mu.Unlock()
	if wake {
		select {
		case c.wake <- struct{}{}:
		default:
		}
	}
}

// drain writes out what is queued, in order, and reports whether the
// connection goes on. The reader calls it after a request, the writer
// goroutine when woken; wmu makes the two take and write batches one at a
// time, so frames leave in the order they were queued.
func (c *conn) drain() bool {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.mu.Lock()
	c.batch, c.q = c.q, c.batch[:0]
	c.mu.Unlock()
	if len(c.batch) == 0 {
		return true
	}
	for i, f := range c.batch {
		if _, err := c.bw.Write(f.b); err != nil {
			c.close()
			return false
		}
		c.sent.Add(1)
		c.srv.sent.Add(1)
		if f.closeAfter {
			c.bw.Flush()
			c.close()
			return false
		}
		c.batch[i] = frame{}
	}
	if c.bw.Flush() != nil {
		c.close()
		return false
	}
	return true
}

func (c *conn) writeLoop() {
	defer c.srv.wg.Done()
	for {
		select {
		case <-c.wake:
		case <-c.done:
			return
		}
		if !c.drain() {
			return
		}
	}
}

func (c *conn) readLoop() {
	defer c.srv.wg.Done()
	defer c.finish()
	if !c.handshake() {
		return
	}
	ws := c.sess.Load()
	var buf []byte
	for {
		if !ws.waitIfPaused(c.done) {
			return
		}
		c.nc.SetReadDeadline(time.Now().Add(c.timeout))
		n, err := jute.ReadFrameLength(c.br)
		if err == nil {
			buf, err = jute.ReadFrameBody(c.br, n, c.srv.opts.MaxBuffer, buf)
		}
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) && ws.current() == c {
				// The client said nothing for its whole session timeout: the
				// server expires the session.
				if ctl := c.srv.zk.Control(ws.id); ctl != nil {
					ctl.Expire()
				}
			}
			return
		}
		// A pause that began while the read was blocked holds the frame.
		if !ws.waitIfPaused(c.done) {
			return
		}
		c.mu.Lock()
		c.inRequest = true
		c.mu.Unlock()
		more := c.handle(buf)
		c.mu.Lock()
		c.inRequest = false
		c.mu.Unlock()
		if !more {
			c.drainOrWake()
			return
		}
		if c.br.Buffered() == 0 && !c.drain() {
			return
		} else if c.br.Buffered() > 0 {
			c.drainOrWake() // more requests already here: let the writer send
		}
		if cap(buf) > 64<<10 {
			buf = nil // do not keep a big frame's buffer
		}
	}
}

// drainOrWake hands what is queued to the writer goroutine.
func (c *conn) drainOrWake() {
	c.mu.Lock()
	n := len(c.q)
	c.mu.Unlock()
	if n > 0 {
		select {
		case c.wake <- struct{}{}:
		default:
		}
	}
}

// finish runs when the reader stops: it waits for a last frame to be
// written, closes the connection and detaches the session from it.
func (c *conn) finish() {
	c.mu.Lock()
	draining := c.closing // a last frame is queued or being written
	c.mu.Unlock()
	if draining {
		t := time.NewTimer(5 * time.Second)
		select {
		case <-c.done:
		case <-t.C:
		}
		t.Stop()
	}
	c.close()
	if ws := c.sess.Load(); ws != nil {
		ws.detach(c)
	}
	c.srv.forget(c)
	c.srv.logf("connection from %s closed", c.remote)
}

// handshake reads the first frame: a four-letter word, or a ConnectRequest
// that opens or resumes a session. It reports whether requests follow.
func (c *conn) handshake() bool {
	c.nc.SetReadDeadline(time.Now().Add(c.srv.opts.SessionlessTimeout))
	n, err := jute.ReadFrameLength(c.br)
	if err != nil {
		return false
	}
	if word, ok := fourLetterWord(n); ok {
		// The word counts as a packet received (NIOServerCnxn).
		c.word.Store(true)
		c.recv.Add(1)
		c.srv.received.Add(1)
		c.fourLetter(word)
		return false
	}
	body, err := jute.ReadFrameBody(c.br, n, c.srv.opts.MaxBuffer, nil)
	if err != nil {
		return false
	}
	return c.connect(body)
}

// connect runs the handshake's ConnectRequest, body. It reports whether
// requests follow.
func (c *conn) connect(body []byte) bool {
	start := time.Now()
	c.recv.Add(1)
	c.srv.received.Add(1)
	var req jute.ConnectRequest
	d := jute.NewDecoder(body)
	req.Decode(d)
	if d.Err() != nil {
		return false
	}
	zk := c.srv.zk
	if c.member < 0 && req.LastZxidSeen > c.lastZxid() {
		// "Refusing session request for client ... as it has seen zxid
		// ... client must try another server": closed without an answer.
		// (A member's handshake is refused by zkmem: Ensemble.OpenSessionAt
		// and ResumeSessionAt.)
		c.refused = zkmem.ErrZxidAhead
		return false
	}
	resp := jute.ConnectResponse{HasReadOnly: req.HasReadOnly}
	if req.SessionID == 0 {
		zs, ro, err := c.openSession(&req)
		if err != nil {
			c.refused = err
			return false
		}
		resp.ReadOnly = ro
		ws := c.srv.sessionFor(zs.ID(), zs.Timeout())
		ws.mu.Lock()
		ws.zs, ws.conn = zs, c
		ws.mu.Unlock()
		c.zs, c.timeout = zs, zs.Timeout()
		c.sess.Store(ws)
		c.rec = c.srv.ledger.record(zs.ID(), c.remote, zs.Timeout())
		c.srv.ledger.prune(zk)
		c.srv.note(c.rec, "open", "", "")
		resp.TimeOut = int32(zs.Timeout() / time.Millisecond)
		resp.SessionID = zs.ID()
		resp.Passwd = zs.Password()
		c.answered(jute.RequestHeader{Type: jute.OpCreateSession}, c.lastZxid(), false, start)
		c.enqueue(jute.AppendFrame(nil, &resp), false)
		return true
	}
	ws := c.srv.sessionFor(req.SessionID, 0)
	if !ws.waitIfPaused(c.done) {
		return false // a paused session's server hears no reconnect either
	}
	ws.mu.Lock()
	old := ws.conn
	ws.conn = c
	if ws.sweep != nil {
		ws.sweep.Stop()
		ws.sweep = nil
	}
	zs, ro, err := c.resumeSession(&req)
	if err != nil {
		ws.conn = old
		if errors.Is(err, zkmem.ErrZxidAhead) || errors.Is(err, zkmem.ErrNoMember) {
			// Refused before the session was looked at: it stays as it
			// was, its note swept once zkmem expires it.
			if old == nil {
				ws.sweep = time.AfterFunc(ws.timeout+time.Second, func() { ws.srv.forgetIfGone(ws) })
			}
			ws.mu.Unlock()
			c.refused = err
			return false
		}
		ws.mu.Unlock()
		c.srv.forgetIfGone(ws)
		// An expired session, or a wrong password: timeout 0, session 0,
		// 16 zero bytes, then the connection closes.
		resp.Passwd = make([]byte, 16)
		c.enqueue(jute.AppendFrame(nil, &resp), true)
		return false
	}
	ws.zs, ws.timeout = zs, zs.Timeout()
	ws.mu.Unlock()
	c.zs, c.timeout = zs, zs.Timeout()
	c.sess.Store(ws)
	c.rec = c.srv.ledger.record(zs.ID(), c.remote, zs.Timeout())
	c.srv.note(c.rec, "reconnect", "", "")
	resp.TimeOut = int32(zs.Timeout() / time.Millisecond)
	resp.SessionID = zs.ID()
	resp.Passwd = zs.Password()
	resp.ReadOnly = ro
	c.enqueue(jute.AppendFrame(nil, &resp), false)
	return true
}

// peerAddr is the address a connection's client comes from, as its "ip"
// identity: a TCP peer's IP (an IPv4-mapped IPv6 address as IPv4, as a
// Java server sees it; an IPv6 zone as the interface's index, which is how
// Java writes it), and zkmem.DefaultClientAddr for a connection with no IP
// peer (net.Pipe, a Unix socket).
func peerAddr(a net.Addr) netip.Addr {
	ta, ok := a.(*net.TCPAddr)
	if !ok {
		return zkmem.DefaultClientAddr
	}
	ip, ok := netip.AddrFromSlice(ta.IP)
	if !ok {
		return zkmem.DefaultClientAddr
	}
	ip = ip.Unmap()
	if ta.Zone != "" && ip.Is6() {
		zone := ta.Zone
		if ifi, err := net.InterfaceByName(zone); err == nil {
			zone = strconv.Itoa(ifi.Index)
		}
		ip = ip.WithZone(zone)
	}
	return ip
}

// handle runs one request. It reports whether the connection goes on.
func (c *conn) handle(body []byte) bool {
	start := time.Now()
	c.recv.Add(1)
	c.srv.received.Add(1)
	d := jute.NewDecoder(body)
	var h jute.RequestHeader
	h.Decode(d)
	if d.Err() != nil {
		return false // a header cut short: the server closes the connection
	}
	if !validOp(h.Type) {
		// UnimplementedRequestProcessor: the error, then the connection
		// closes. The reply carries the fresh request's zxid, -1.
		c.enqueue(jute.AppendFrame(nil, &jute.ReplyHeader{Xid: h.Xid, Zxid: -1, Err: jute.ErrUnimplemented}), true)
		return false
	}
	req, reads, ok := decodeRequest(h.Type, d)
	if !ok {
		if h.Type == jute.OpAuth || h.Type == jute.OpSasl {
			return false // an auth or SASL packet that does not decode closes the connection
		}
		zxid := c.lastZxid()
		c.enqueue(jute.AppendFrame(nil, &jute.ReplyHeader{Xid: h.Xid, Zxid: zxid, Err: jute.ErrMarshallingError}), false)
		c.answered(h, zxid, true, start)
		return true
	}
	return c.run(h, req, reads, start)
}

// run runs a decoded request (reads for a multiRead), received at start,
// and counts it. It reports whether the connection goes on.
func (c *conn) run(h jute.RequestHeader, req *zkmem.Request, reads []*zkmem.Request, start time.Time) bool {
	c.cur = current{xid: h.Xid, op: h.Type, start: start}
	var resp zkmem.Response
	if h.Type == jute.OpMultiRead {
		resp = c.multiRead(reads)
	} else {
		resp = c.zs.Do(req)
	}
	replied, zxid, counted := c.cur.replied, c.cur.zxid, c.cur.counted
	c.cur = current{}
	c.account(h.Type, req, resp)
	if resp.Fault != zkmem.NoFault || !replied || resp.Closed || h.Type == jute.OpCloseSession {
		// A lost reply or dropped request, a session not attached any more,
		// a failed addAuth (its reply closes the connection), a closed
		// session: this connection is done.
		if !replied {
			c.close()
		}
		return false
	}
	if h.Type != jute.OpAuth && !counted {
		c.answered(h, zxid, resp.Err != nil, start)
	}
	return true
}

// account notes a request in the session's record: its op, the fault that
// hit it, a close.
func (c *conn) account(op int32, req *zkmem.Request, resp zkmem.Response) {
	if c.rec == nil || op == jute.OpPing {
		return
	}
	name := jute.OpName(op)
	c.rec.setLastOp(name)
	if resp.Fault != zkmem.NoFault {
		path := ""
		if req != nil {
			path = req.Path
		}
		c.srv.note(c.rec, faultName(resp.Fault), name, path)
	}
	if op == jute.OpCloseSession && resp.Err == nil && resp.Fault == zkmem.NoFault {
		c.rec.setClosed()
		c.srv.note(c.rec, "close", "", "")
	}
}

// multiRead runs the reads of a multiRead one after the other and answers
// them in one reply.
func (c *conn) multiRead(reads []*zkmem.Request) zkmem.Response {
	c.cur.collect = true
	c.cur.collected = c.cur.collected[:0]
	for _, r := range reads {
		resp := c.zs.Do(r)
		if resp.Fault != zkmem.NoFault || resp.Closed {
			return resp
		}
	}
	c.cur.collect = false
	if len(c.cur.collected) != len(reads) {
		return zkmem.Response{Err: zksim.ErrConnectionLoss, Closed: true}
	}
	out := &jute.MultiResponse{Results: make([]jute.MultiResult, len(reads))}
	for i, r := range c.cur.collected {
		switch {
		case r.Err != nil:
			out.Results[i] = jute.MultiResult{Type: jute.OpError, Err: int32(zksim.CodeOf(r.Err))}
		case reads[i].Op == zkmem.OpGetChildren:
			out.Results[i] = jute.MultiResult{Type: jute.OpGetChildren, Rec: &jute.StringsResponse{Strings: r.Children}}
		default:
			out.Results[i] = jute.MultiResult{Type: jute.OpGetData, Rec: &jute.GetDataResponse{Data: r.Data, Stat: fromStat(r.Stat)}}
		}
	}
	zxid := c.lastZxid() // an empty multiRead
	if len(reads) > 0 {
		zxid = c.cur.collected[len(reads)-1].Zxid
	}
	c.enqueue(jute.AppendFrame(nil, &jute.ReplyHeader{Xid: c.cur.xid, Zxid: zxid}, out), false)
	c.cur.replied = true
	return zkmem.Response{Zxid: zxid}
}

// current is the request a connection is running: what its reply needs.
// Only the reader goroutine sets it; the Sink reads it while the reader is
// inside Do.
type current struct {
	xid       int32
	op        int32
	replied   bool
	zxid      int64 // the reply's zxid, once replied
	collect   bool  // multiRead: keep the replies, do not send them
	collected []zkmem.Response
	start     time.Time // when the request came in (run)
	counted   bool      // answered ran before the reply was queued (countReply)
}

// sink is a connection as zkmem's Sink: zkmem calls it with its lock held,
// in its order, so what it queues goes out in the server's order.
type sink conn

// Reply implements zkmem.Sink: it queues the reply to the running request.
func (s *sink) Reply(req *zkmem.Request, resp *zkmem.Response) {
	c := (*conn)(s)
	if c.cur.collect {
		c.cur.collected = append(c.cur.collected, *resp)
		return
	}
	c.cur.replied = true
	if c.hook != nil {
		c.hook(req, resp)
	}
	xid, zxid := c.cur.xid, resp.Zxid
	switch c.cur.op {
	case jute.OpAuth, jute.OpSasl:
		zxid = 0
	case jute.OpPing:
		xid = jute.XidPing
	}
	hdr := jute.ReplyHeader{Xid: xid, Zxid: zxid}
	var body jute.Record
	if c.cur.op == jute.OpMulti && resp.Results != nil {
		// A failed multi is answered OK, its error results inside.
		body = replyBody(c.cur.op, req, resp)
	} else if c.cur.op == jute.OpSasl {
		// Failed or not, a SASL reply carries a token (null on failure).
		hdr.Err = int32(zksim.CodeOf(resp.Err))
		body = &jute.SASLToken{Token: resp.Token}
	} else if resp.Err != nil {
		hdr.Err = int32(zksim.CodeOf(resp.Err))
	} else if c.cur.op == jute.OpExists && resp.Stat == nil {
		hdr.Err = jute.ErrNoNode
	} else {
		c.cur.zxid = zxid
		c.countReply(hdr, resp)
		c.enqueue(appendReply(hdr, c.cur.op, req, resp), resp.Closed || c.cur.op == jute.OpCloseSession)
		return
	}
	c.cur.zxid = zxid
	c.countReply(hdr, resp)
	c.enqueue(jute.AppendReply(nil, hdr, body), resp.Closed || c.cur.op == jute.OpCloseSession)
}

// Event implements zkmem.Sink: a watch notification (zxid -1 in its header,
// as a real server sends it).
func (s *sink) Event(ev zksim.Event, zxid int64) {
	(*conn)(s).enqueue(jute.AppendFrame(nil,
		&jute.ReplyHeader{Xid: jute.XidNotification, Zxid: -1},
		&jute.WatcherEvent{Type: int32(ev.Type), State: jute.StateSyncConnected, Path: ev.Path}), false)
}

// Closed implements zkmem.Sink: the server took the connection away.
func (s *sink) Closed(error) { (*conn)(s).close() }

// validOp mirrors Request.isValid, plus the auth packet, less
// createSession and deleteContainer (server-internal ops no client sends,
// answered as unknown).
func validOp(op int32) bool {
	switch op {
	case jute.OpCheck, jute.OpCloseSession, jute.OpCreate, jute.OpCreate2, jute.OpCreateTTL,
		jute.OpCreateContainer, jute.OpDelete, jute.OpExists,
		jute.OpGetACL, jute.OpGetChildren, jute.OpGetAllChildrenNumber, jute.OpGetChildren2,
		jute.OpGetData, jute.OpGetEphemerals, jute.OpMulti, jute.OpMultiRead, jute.OpPing,
		jute.OpReconfig, jute.OpSetACL, jute.OpSetData, jute.OpSetWatches, jute.OpSetWatches2,
		jute.OpSync, jute.OpCheckWatches, jute.OpRemoveWatches, jute.OpAddWatch, jute.OpWhoAmI,
		jute.OpAuth, jute.OpSasl:
		return true
	}
	return false
}
