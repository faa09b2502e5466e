package gozk

import (
	"encoding/binary"
	"errors"
	"net"
	"net/netip"
	"slices"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zksim/zksim"
)

// onEvent receives every event go-zookeeper produces, synchronously on its
// connection loop (it must not block). Node events go to the watch channels
// they fire (see forward); session state changes are mapped to zksim
// states.
//
// go-zookeeper's states map as follows: StateConnecting to StateConnecting;
// StateHasSession (session granted or re-established) to StateConnected;
// StateDisconnected to StateDisconnected; StateExpired to StateExpired;
// StateAuthFailed to StateAuthFailed; StateConnectedReadOnly (a session on
// a server in read-only mode) to StateConnectedReadOnly, which, as
// StateConnected does, ends Connect's wait. Its StateConnected (TCP
// connected, no session yet) has no zksim counterpart and is dropped.
// go-zookeeper v1.0.4 never asks a server for read-only mode, so it never
// reports StateConnectedReadOnly itself; the mapping is there for a client
// that does.
func (c *Conn) onEvent(ev zk.Event) {
	if ev.Type != zk.EventSession {
		if ev.Type > 0 {
			c.onWatchEvent(ev)
		}
		return
	}
	var st zksim.State
	switch ev.State {
	case zk.StateConnecting:
		st = zksim.StateConnecting
	case zk.StateHasSession:
		st = zksim.StateConnected
	case zk.StateDisconnected:
		st = zksim.StateDisconnected
	case zk.StateExpired:
		st = zksim.StateExpired
	case zk.StateAuthFailed:
		st = zksim.StateAuthFailed
	case zk.StateConnectedReadOnly:
		st = zksim.StateConnectedReadOnly
	default:
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.expired {
		// The Conn is finished; go-zookeeper's own winding down is noise.
		return
	}
	switch st {
	case zksim.StateConnected, zksim.StateConnectedReadOnly:
		if c.sessionID.Load() == 0 {
			// The connect response, read before this event, named it.
			c.sessionID.Store(c.grantedID.Load())
			close(c.connected)
		}
	case zksim.StateExpired:
		// Set before go-zookeeper's loop goes on to redial, so that the
		// dialer refuses and no new session is ever made.
		c.expired = true
		c.finished.Store(true)
		close(c.expiredCh)
	}
	if st == c.state {
		return
	}
	c.state = st
	c.publishLocked(st)
}

// errFinished is what the dialer answers once the Conn is finished.
var errFinished = errors.New("gozk: the connection is finished (session expired or closed)")

// dial is go-zookeeper's dialer. It refuses once the Conn is finished, so
// that go-zookeeper cannot open a new session after an expiry, and it wraps
// the connection to read the session id and the negotiated session timeout
// from the server's connect response (go-zookeeper keeps the timeout to
// itself, and its session id reads 0 after an expiry).
func (c *Conn) dial(network, address string, timeout time.Duration) (net.Conn, error) {
	if c.finished.Load() {
		return nil, errFinished
	}
	d := net.Dialer{Timeout: timeout}
	if c.local.IsValid() {
		d.LocalAddr = net.TCPAddrFromAddrPort(netip.AddrPortFrom(c.local, 0))
	}
	nc, err := d.Dial(network, address)
	c.netMu.Lock()
	defer c.netMu.Unlock()
	if !slices.Contains(c.tried, address) {
		c.tried = append(c.tried, address)
	}
	if err != nil {
		c.dialErr = err
		return nil, err
	}
	if c.finished.Load() {
		_ = nc.Close()
		return nil, errFinished
	}
	c.netConn = nc
	return &sniffConn{Conn: nc, conn: c}, nil
}

// stopZK closes the go-zookeeper connection (a graceful session close if it
// is connected: it waits up to a second for the server's answer), then
// closes the socket under it. go-zookeeper can sit in a read for ten times
// its receive timeout while a server holds a connection without answering;
// closing the socket ends that read at once. c.finished is set, so no new
// socket is dialled.
func (c *Conn) stopZK() {
	c.zk.Close()
	c.netMu.Lock()
	defer c.netMu.Unlock()
	if c.netConn != nil {
		_ = c.netConn.Close()
	}
}

// sniffConn watches the first bytes the server sends on a connection: the
// connect response, a length-prefixed record of protocolVersion (int32),
// timeOut (int32), sessionId (int64) and passwd; an expired session is
// answered with zeros. go-zookeeper reads it from one goroutine before it
// starts any other reader, so no locking is needed.
type sniffConn struct {
	net.Conn
	conn *Conn
	head [20]byte // length, protocolVersion, timeOut, sessionId
	n    int
}

func (s *sniffConn) Read(p []byte) (int, error) {
	n, err := s.Conn.Read(p)
	if s.n < len(s.head) {
		s.n += copy(s.head[s.n:], p[:n])
		if s.n == len(s.head) {
			if ms := int32(binary.BigEndian.Uint32(s.head[8:12])); ms > 0 {
				s.conn.timeoutMs.Store(ms)
			}
			if id := int64(binary.BigEndian.Uint64(s.head[12:20])); id != 0 {
				s.conn.grantedID.Store(id)
			}
		}
	}
	return n, err
}
