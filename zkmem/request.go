package zkmem

import (
	"time"

	"github.com/zksim/zksim"
)

// Request is one request a client sends its session, as Session.Do takes it
// and as fault hooks see it. Op says which fields matter; the others are
// zero. Do neither keeps the Request nor its slices after it returns.
type Request struct {
	Op   OpCode
	Path string // the node acted on: the first op's path for a multi; the prefix for getEphemerals

	Data    []byte           // create, setData
	Version int32            // delete, setData, setACL, check (-1: any)
	ACL     []zksim.ACL      // create, setACL
	Mode    zksim.CreateMode // create
	TTL     time.Duration    // create with a TTL mode
	Ops     []zksim.Op       // multi, multiRead

	// Watch asks exists, getData or getChildren to leave a watch.
	Watch bool

	AuthScheme string // addAuth: "digest", "ip", ...
	Auth       []byte // addAuth: the credentials ("user:password" for digest); sasl: the client's token

	WatcherKind  zksim.WatcherKind  // removeWatches, checkWatches
	AddWatchMode zksim.AddWatchMode // addWatch

	// SetWatches is what a reconnecting client re-registers (setWatches).
	SetWatches *SetWatches

	// Reconfig is the body of a reconfig; nil reads as every field null
	// and CurConfigID -1.
	Reconfig *Reconfig

	// Size is the request's encoded (jute) size in bytes, the header
	// excluded. A request with Size over Options.MaxRequestBytes makes the
	// server close the connection without applying it. 0 skips the check.
	Size int
}

// String renders the request as "op path".
func (r *Request) String() string { return r.Op.String() + " " + r.Path }

// SetWatches lists the watches a reconnecting client held when its
// connection dropped, relative to the last zxid it saw
// (DataTree.setWatches): a watch whose node changed after RelativeZxid fires
// at once, the others are registered again.
type SetWatches struct {
	RelativeZxid int64
	Data         []string // getData watches
	Exist        []string // exists watches on absent nodes
	Child        []string // getChildren watches
	Persistent   []string // addWatch PERSISTENT
	Recursive    []string // addWatch PERSISTENT_RECURSIVE
}

// Response is what Session.Do returns for one request: the reply's fields
// (those of the request's op; the others are zero), the zxid the reply
// carries, and what the transport must do about the connection.
type Response struct {
	// Err is the reply's error: a zksim error, ErrConnectionLoss when the
	// request did not get through (Fault set, an oversized request, a
	// session not attached).
	Err error

	Path       string           // create: the name created; sync: the path
	Stat       *zksim.Stat      // exists (nil: absent), getData, getChildren, setData, setACL, getACL
	Data       []byte           // getData
	Children   []string         // getChildren, getEphemerals: in the server's order
	ACL        []zksim.ACL      // getACL
	Results    []zksim.OpResult // multi, multiRead
	Count      int32            // getAllChildrenNumber
	Identities []Identity       // whoAmI: who the session has authenticated as
	Token      []byte           // sasl: the server's next token (nil: none)

	// Zxid is the zxid of the server's last transaction when it answered:
	// the zxid of the reply header, which a client remembers for setWatches
	// and session resumption.
	Zxid int64

	// Fault is the fault the plane decided for the request (see Control),
	// which the transport realises: DropRequest (the request was not
	// applied; no reply) or LoseReply (it was applied; no reply). Either
	// way Closed is true.
	Fault ConnFault

	// Closed reports that the server closed the session's connection with
	// this request: after a Fault, for an oversized request (not applied,
	// no reply), or after a failed addAuth (the reply, ErrAuthFailed, goes
	// out first). The session is detached, as by Session.Detach.
	Closed bool

	// unanswered: the server closes the connection without a reply, as a
	// real server does on a SASL response its provider fails on with a
	// runtime exception (sasl.go).
	unanswered bool

	// What the in-process Conn's sink leaves for its caller.
	ch      chan zksim.Event
	sub     *persistentSub
	removed []removedWatch
}

// Identity is one identity a session has authenticated as (ZooKeeper's
// Id) as whoAmI reports it: scheme "ip" with the client's address, "digest"
// with the user name, and so on.
type Identity struct {
	Scheme string
	ID     string
}

// Sink is how a Session's transport hears from the server. The server calls
// it in its own order, with its lock held: a Sink must not block and must
// not call the server. Reply comes in that order too, so a transport that
// writes what it is given, in the order given, keeps ZooKeeper's
// per-session FIFO: a watch notification is never overtaken by a reply the
// server produced after it, nor a reply by a later notification.
type Sink interface {
	// Reply is the reply to req, produced by Do before it returns. It is not
	// called for a request whose reply is not sent (resp.Fault set, or an
	// oversized request).
	Reply(req *Request, resp *Response)
	// Event is a watch notification (Type, State, Path) and the zxid of the
	// transaction that fired it (for a watch fired by setWatches, the
	// server's last zxid).
	Event(ev zksim.Event, zxid int64)
	// Closed says that the server took the session's connection away: err is
	// zksim.ErrConnectionLoss when the connection was closed and the session
	// lives on (Control.Disconnect), zksim.ErrSessionExpired when the
	// session expired while attached (Control.Expire, a timeout, or a
	// paused client found expired on Control.Resume), zksim.ErrClosing when
	// the server shut down. It is not called for a connection closed with a
	// Response (see Response.Closed) nor by Detach.
	Closed(err error)
}
