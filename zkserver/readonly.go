package zkserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/zkwire/jute"
)

// ReadOnlySession is a minimal client session opened the way a client that
// allows read-only mode opens one (the Java client's canBeReadOnly): its
// connect requests carry the readOnly flag, so a member cut off from its
// quorum (in read-only mode) takes it, where it refuses every other client.
// go-zookeeper cannot ask for read-only mode; this client speaks just
// enough of the protocol to read, and to see writes refused.
//
// A ZooKeeper 3.8 member in read-only mode serves local sessions only: it
// creates none unless localSessionsEnabled is set (it answers the connect
// request with NotReadOnly), and it refuses to resume a global session
// (closing the connection).
//
// It sends one request at a time and no heartbeats: use it for less than
// its session timeout. Its methods are safe for concurrent use (they take
// turns).
type ReadOnlySession struct {
	mu        sync.Mutex
	conn      net.Conn
	readOnly  bool
	sessionID int64
	passwd    []byte
	timeout   time.Duration
	xid       int32
	lastZxid  int64
	buf       []byte
}

// ErrSessionRefused is DialReadOnly's error when the
// server closed the connection instead of answering the connect request:
// a member in read-only mode refuses clients that do not allow it, and
// every member refuses a client that has seen a zxid newer than the last
// it applied.
var ErrSessionRefused = errors.New("zkserver: the server closed the connection without granting a session")

// DialReadOnly connects to the server at addr as a client that allows
// read-only mode and has seen lastZxidSeen (0 for a fresh client), and asks
// for a new session of sessionTimeout. It blocks until the server has
// answered or ctx is done. It returns ErrSessionRefused when the server
// closed the connection instead, and zksim.ErrNotReadOnly when a member in
// read-only mode refused to create the session.
func DialReadOnly(ctx context.Context, addr string, sessionTimeout time.Duration, lastZxidSeen int64) (*ReadOnlySession, error) {
	s := &ReadOnlySession{lastZxid: lastZxidSeen, timeout: sessionTimeout, passwd: make([]byte, 16)}
	if err := s.handshake(ctx, addr); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *ReadOnlySession) handshake(ctx context.Context, addr string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.handshakeLocked(ctx, addr)
}

func (s *ReadOnlySession) handshakeLocked(ctx context.Context, addr string) error {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	req := &jute.ConnectRequest{
		LastZxidSeen: s.lastZxid,
		TimeOut:      int32(s.timeout.Milliseconds()),
		SessionID:    s.sessionID,
		Passwd:       s.passwd,
		ReadOnly:     true,
		HasReadOnly:  true,
	}
	if _, err := conn.Write(jute.AppendFrame(nil, req)); err != nil {
		conn.Close()
		return wrapCtx(ctx, err)
	}
	frame, err := jute.ReadFrame(conn, jute.DefaultMaxBuffer, nil)
	if err != nil {
		conn.Close()
		if ctx.Err() == nil && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET)) {
			return ErrSessionRefused
		}
		return wrapCtx(ctx, err)
	}
	var resp jute.ConnectResponse
	if err := jute.Unmarshal(frame, &resp); err != nil {
		conn.Close()
		// A read-only member that will not create a global session
		// answers with a reply header carrying NotReadOnly.
		var h jute.ReplyHeader
		if jute.Unmarshal(frame, &h) == nil && h.Err != 0 {
			return zksim.ErrorForCode(zksim.Code(h.Err))
		}
		return fmt.Errorf("zkserver: connect response %x: %w", frame, err)
	}
	if resp.SessionID == 0 {
		conn.Close()
		return ErrSessionRefused
	}
	s.conn = conn
	s.readOnly, s.sessionID, s.passwd = resp.ReadOnly, resp.SessionID, resp.Passwd
	s.timeout = time.Duration(resp.TimeOut) * time.Millisecond
	return nil
}

// ReadOnly reports whether the server granted the session in read-only
// mode.
func (s *ReadOnlySession) ReadOnly() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.readOnly
}

// SessionID returns the session's id.
func (s *ReadOnlySession) SessionID() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessionID
}

// SessionTimeout returns the timeout the server granted.
func (s *ReadOnlySession) SessionTimeout() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.timeout
}

// LastZxid returns the newest zxid the server's replies carried.
func (s *ReadOnlySession) LastZxid() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastZxid
}

// Close closes the connection without closing the session, which the
// ensemble expires after its timeout.
func (s *ReadOnlySession) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conn.Close()
}

// Get returns the data and Stat of the node at path.
func (s *ReadOnlySession) Get(ctx context.Context, path string) ([]byte, *zksim.Stat, error) {
	var resp jute.GetDataResponse
	if err := s.call(ctx, jute.OpGetData, &jute.PathWatchRequest{Path: path}, &resp); err != nil {
		return nil, nil, err
	}
	st := zksim.Stat(resp.Stat)
	return resp.Data, &st, nil
}

// Create creates a node with the open ACL and returns its path.
func (s *ReadOnlySession) Create(ctx context.Context, path string, data []byte, mode zksim.CreateMode) (string, error) {
	acl := []jute.ACL{{Perms: int32(zksim.PermAll), ID: jute.ID{Scheme: "world", ID: "anyone"}}}
	var created jute.PathRequest // CreateResponse has PathRequest's layout
	if err := s.call(ctx, jute.OpCreate, &jute.CreateRequest{Path: path, Data: data, ACL: acl, Flags: int32(mode)}, &created); err != nil {
		return "", err
	}
	return created.Path, nil
}

// Set replaces the data of the node at path if its version is version (-1
// for any).
func (s *ReadOnlySession) Set(ctx context.Context, path string, data []byte, version int32) (*zksim.Stat, error) {
	var resp jute.StatResponse
	if err := s.call(ctx, jute.OpSetData, &jute.SetDataRequest{Path: path, Data: data, Version: version}, &resp); err != nil {
		return nil, err
	}
	st := zksim.Stat(resp.Stat)
	return &st, nil
}

// call sends one request and reads frames until its reply; an error code
// in the reply header is returned as the zksim error for it.
func (s *ReadOnlySession) call(ctx context.Context, op int32, req, resp jute.Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	stop := context.AfterFunc(ctx, func() { _ = s.conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	s.xid++
	xid := s.xid
	if _, err := s.conn.Write(jute.AppendFrame(nil, &jute.RequestHeader{Xid: xid, Type: op}, req)); err != nil {
		return fmt.Errorf("%w: %v", zksim.ErrConnectionLoss, wrapCtx(ctx, err))
	}
	for {
		frame, err := jute.ReadFrame(s.conn, jute.DefaultMaxBuffer, s.buf)
		if err != nil {
			return fmt.Errorf("%w: %v", zksim.ErrConnectionLoss, wrapCtx(ctx, err))
		}
		s.buf = frame
		d := jute.NewDecoder(frame)
		var h jute.ReplyHeader
		h.Decode(d)
		if d.Err() != nil {
			return d.Err()
		}
		if h.Xid != xid {
			continue // a watch event or a ping's answer
		}
		if h.Zxid > 0 {
			s.lastZxid = max(s.lastZxid, h.Zxid)
		}
		if h.Err != 0 {
			return zksim.ErrorForCode(zksim.Code(h.Err))
		}
		return jute.Unmarshal(d.Rest(), resp)
	}
}
