package jute

// The session and header records of module org.apache.zookeeper.proto.

// ConnectRequest opens or resumes a session: the first frame a client
// sends. ReadOnly is the trailing flag a 3.x client appends; HasReadOnly
// reports whether it was there (an old client omits it, and then the
// server's response omits its own).
type ConnectRequest struct {
	ProtocolVersion int32
	LastZxidSeen    int64
	TimeOut         int32
	SessionID       int64
	Passwd          []byte
	ReadOnly        bool
	HasReadOnly     bool
}

// Encode implements Record.
func (r *ConnectRequest) Encode(e *Encoder) {
	e.Int(r.ProtocolVersion)
	e.Long(r.LastZxidSeen)
	e.Int(r.TimeOut)
	e.Long(r.SessionID)
	e.Buffer(r.Passwd)
	if r.HasReadOnly {
		e.Bool(r.ReadOnly)
	}
}

// Decode implements Record.
func (r *ConnectRequest) Decode(d *Decoder) {
	r.ProtocolVersion = d.Int()
	r.LastZxidSeen = d.Long()
	r.TimeOut = d.Int()
	r.SessionID = d.Long()
	r.Passwd = d.Buffer()
	r.HasReadOnly = d.err == nil && d.Len() > 0
	if r.HasReadOnly {
		r.ReadOnly = d.Bool()
	}
}

// ConnectResponse answers a ConnectRequest. A session the server will not
// resume (wrong password, expired) is answered with TimeOut 0, SessionID 0
// and 16 zero bytes of password, and the connection then closes.
type ConnectResponse struct {
	ProtocolVersion int32
	TimeOut         int32
	SessionID       int64
	Passwd          []byte
	ReadOnly        bool
	HasReadOnly     bool
}

// Encode implements Record.
func (r *ConnectResponse) Encode(e *Encoder) {
	e.Int(r.ProtocolVersion)
	e.Int(r.TimeOut)
	e.Long(r.SessionID)
	e.Buffer(r.Passwd)
	if r.HasReadOnly {
		e.Bool(r.ReadOnly)
	}
}

// Decode implements Record.
func (r *ConnectResponse) Decode(d *Decoder) {
	r.ProtocolVersion = d.Int()
	r.TimeOut = d.Int()
	r.SessionID = d.Long()
	r.Passwd = d.Buffer()
	r.HasReadOnly = d.err == nil && d.Len() > 0
	if r.HasReadOnly {
		r.ReadOnly = d.Bool()
	}
}

// RequestHeader starts every request after the handshake.
type RequestHeader struct {
	Xid  int32
	Type int32
}

// RequestHeaderSize is the encoded size of a RequestHeader.
const RequestHeaderSize = 8

// Encode implements Record.
func (r *RequestHeader) Encode(e *Encoder) { e.Int(r.Xid); e.Int(r.Type) }

// Decode implements Record.
func (r *RequestHeader) Decode(d *Decoder) { r.Xid = d.Int(); r.Type = d.Int() }

// ReplyHeader starts every reply and notification.
type ReplyHeader struct {
	Xid  int32
	Zxid int64
	Err  int32
}

// ReplyHeaderSize is the encoded size of a ReplyHeader.
const ReplyHeaderSize = 16

// Encode implements Record.
func (r *ReplyHeader) Encode(e *Encoder) { e.Int(r.Xid); e.Long(r.Zxid); e.Int(r.Err) }

// Decode implements Record.
func (r *ReplyHeader) Decode(d *Decoder) { r.Xid = d.Int(); r.Zxid = d.Long(); r.Err = d.Int() }

// MultiHeader precedes each op of a multi request or response; Done marks
// the end.
type MultiHeader struct {
	Type int32
	Done bool
	Err  int32
}

// Encode implements Record.
func (r *MultiHeader) Encode(e *Encoder) { e.Int(r.Type); e.Bool(r.Done); e.Int(r.Err) }

// Decode implements Record.
func (r *MultiHeader) Decode(d *Decoder) { r.Type = d.Int(); r.Done = d.Bool(); r.Err = d.Int() }

// AuthPacket is an addAuth request (xid -4).
type AuthPacket struct {
	Type   int32
	Scheme string
	Auth   []byte
}

// Encode implements Record.
func (r *AuthPacket) Encode(e *Encoder) { e.Int(r.Type); e.String(r.Scheme); e.Buffer(r.Auth) }

// Decode implements Record.
func (r *AuthPacket) Decode(d *Decoder) { r.Type = d.Int(); r.Scheme = d.String(); r.Auth = d.Buffer() }

// SASLToken is the body of a SASL request (GetSASLRequest) and of its
// reply (SetSASLResponse): one token of the exchange, nil for none.
type SASLToken struct {
	Token []byte
}

// Encode implements Record.
func (r *SASLToken) Encode(e *Encoder) { e.Buffer(r.Token) }

// Decode implements Record.
func (r *SASLToken) Decode(d *Decoder) { r.Token = d.Buffer() }

// WatcherEvent is the body of a notification (xid -1).
type WatcherEvent struct {
	Type  int32
	State int32
	Path  string
}

// Encode implements Record.
func (r *WatcherEvent) Encode(e *Encoder) { e.Int(r.Type); e.Int(r.State); e.String(r.Path) }

// Decode implements Record.
func (r *WatcherEvent) Decode(d *Decoder) { r.Type = d.Int(); r.State = d.Int(); r.Path = d.String() }

// SetWatches re-registers a reconnecting client's watches (op setWatches);
// SetWatches2 (op setWatches2) adds persistent ones. Both are this type:
// V2 selects the layout.
type SetWatches struct {
	RelativeZxid        int64
	DataWatches         []string
	ExistWatches        []string
	ChildWatches        []string
	PersistentWatches   []string
	PersistentRecursive []string
	V2                  bool
}

// Encode implements Record.
func (r *SetWatches) Encode(e *Encoder) {
	e.Long(r.RelativeZxid)
	e.Strings(r.DataWatches)
	e.Strings(r.ExistWatches)
	e.Strings(r.ChildWatches)
	if r.V2 {
		e.Strings(r.PersistentWatches)
		e.Strings(r.PersistentRecursive)
	}
}

// Decode implements Record.
func (r *SetWatches) Decode(d *Decoder) {
	r.RelativeZxid = d.Long()
	r.DataWatches = d.Strings()
	r.ExistWatches = d.Strings()
	r.ChildWatches = d.Strings()
	if r.V2 {
		r.PersistentWatches = d.Strings()
		r.PersistentRecursive = d.Strings()
	}
}
