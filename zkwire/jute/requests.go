package jute

// The request records of module org.apache.zookeeper.proto. Requests with
// the same layout share a Go type; the op code says which it is.

// CreateRequest is the body of create, create2 and createContainer, and
// (with TTL, when HasTTL) of createTTL.
type CreateRequest struct {
	Path   string
	Data   []byte
	ACL    []ACL
	Flags  int32
	TTL    int64
	HasTTL bool
}

// Encode implements Record.
func (r *CreateRequest) Encode(e *Encoder) {
	e.String(r.Path)
	e.Buffer(r.Data)
	encodeACLs(e, r.ACL)
	e.Int(r.Flags)
	if r.HasTTL {
		e.Long(r.TTL)
	}
}

// Decode implements Record.
func (r *CreateRequest) Decode(d *Decoder) {
	r.Path = d.String()
	r.Data = d.Buffer()
	r.ACL = decodeACLs(d)
	r.Flags = d.Int()
	if r.HasTTL {
		r.TTL = d.Long()
	}
}

// PathVersionRequest is the body of delete and check (CheckVersionRequest).
type PathVersionRequest struct {
	Path    string
	Version int32
}

// Encode implements Record.
func (r *PathVersionRequest) Encode(e *Encoder) { e.String(r.Path); e.Int(r.Version) }

// Decode implements Record.
func (r *PathVersionRequest) Decode(d *Decoder) { r.Path = d.String(); r.Version = d.Int() }

// SetDataRequest is the body of setData.
type SetDataRequest struct {
	Path    string
	Data    []byte
	Version int32
}

// Encode implements Record.
func (r *SetDataRequest) Encode(e *Encoder) { e.String(r.Path); e.Buffer(r.Data); e.Int(r.Version) }

// Decode implements Record.
func (r *SetDataRequest) Decode(d *Decoder) {
	r.Path = d.String()
	r.Data = d.Buffer()
	r.Version = d.Int()
}

// PathWatchRequest is the body of exists, getData, getChildren and
// getChildren2.
type PathWatchRequest struct {
	Path  string
	Watch bool
}

// Encode implements Record.
func (r *PathWatchRequest) Encode(e *Encoder) { e.String(r.Path); e.Bool(r.Watch) }

// Decode implements Record.
func (r *PathWatchRequest) Decode(d *Decoder) { r.Path = d.String(); r.Watch = d.Bool() }

// PathRequest is the body of getACL, sync, getAllChildrenNumber and
// getEphemerals (whose path is a prefix), and of the responses of sync
// and create.
type PathRequest struct {
	Path string
}

// Encode implements Record.
func (r *PathRequest) Encode(e *Encoder) { e.String(r.Path) }

// Decode implements Record.
func (r *PathRequest) Decode(d *Decoder) { r.Path = d.String() }

// SetACLRequest is the body of setACL.
type SetACLRequest struct {
	Path    string
	ACL     []ACL
	Version int32
}

// Encode implements Record.
func (r *SetACLRequest) Encode(e *Encoder) { e.String(r.Path); encodeACLs(e, r.ACL); e.Int(r.Version) }

// Decode implements Record.
func (r *SetACLRequest) Decode(d *Decoder) {
	r.Path = d.String()
	r.ACL = decodeACLs(d)
	r.Version = d.Int()
}

// PathTypeRequest is the body of addWatch (Type is the mode),
// checkWatches and removeWatches (Type is the watcher type).
type PathTypeRequest struct {
	Path string
	Type int32
}

// Encode implements Record.
func (r *PathTypeRequest) Encode(e *Encoder) { e.String(r.Path); e.Int(r.Type) }

// Decode implements Record.
func (r *PathTypeRequest) Decode(d *Decoder) { r.Path = d.String(); r.Type = d.Int() }

// ReconfigRequest is the body of reconfig. Its strings are nullable, and
// the server tells null (nil, length -1) from empty: a null NewMembers asks
// for an incremental change, an empty one for a new configuration of no
// members.
type ReconfigRequest struct {
	JoiningServers *string
	LeavingServers *string
	NewMembers     *string
	CurConfigID    int64
}

// Encode implements Record.
func (r *ReconfigRequest) Encode(e *Encoder) {
	e.NullableString(r.JoiningServers)
	e.NullableString(r.LeavingServers)
	e.NullableString(r.NewMembers)
	e.Long(r.CurConfigID)
}

// Decode implements Record.
func (r *ReconfigRequest) Decode(d *Decoder) {
	r.JoiningServers = d.NullableString()
	r.LeavingServers = d.NullableString()
	r.NewMembers = d.NullableString()
	r.CurConfigID = d.Long()
}

// Empty is the body of requests and responses that have none (ping,
// closeSession, whoAmI; the responses of delete, check and setWatches).
type Empty struct{}

// Encode implements Record.
func (*Empty) Encode(*Encoder) {}

// Decode implements Record.
func (*Empty) Decode(*Decoder) {}

// MultiOp is one op of a multi or multiRead request: its op code and its
// record (*CreateRequest, *PathVersionRequest, *SetDataRequest or
// *PathWatchRequest).
type MultiOp struct {
	Type int32
	Rec  Record
}

// MultiRequest is the body of multi and multiRead: ops each behind a
// MultiHeader, ended by a header with Done set.
type MultiRequest struct {
	Ops []MultiOp
}

// Encode implements Record.
func (r *MultiRequest) Encode(e *Encoder) {
	for _, op := range r.Ops {
		h := MultiHeader{Type: op.Type, Err: -1}
		h.Encode(e)
		op.Rec.Encode(e)
	}
	h := MultiHeader{Type: -1, Done: true, Err: -1}
	h.Encode(e)
}

// Decode implements Record. An op code a multi cannot hold is ErrBadOp.
func (r *MultiRequest) Decode(d *Decoder) {
	r.Ops = nil
	for d.err == nil {
		var h MultiHeader
		h.Decode(d)
		if d.err != nil || h.Done {
			return
		}
		rec := multiOpRecord(h.Type)
		if rec == nil {
			d.fail(ErrBadOp)
			return
		}
		rec.Decode(d)
		r.Ops = append(r.Ops, MultiOp{Type: h.Type, Rec: rec})
	}
}

func multiOpRecord(op int32) Record {
	switch op {
	case OpCreate, OpCreate2, OpCreateContainer:
		return &CreateRequest{}
	case OpCreateTTL:
		return &CreateRequest{HasTTL: true}
	case OpDelete, OpCheck:
		return &PathVersionRequest{}
	case OpSetData:
		return &SetDataRequest{}
	case OpGetChildren, OpGetData:
		return &PathWatchRequest{}
	}
	return nil
}

// NewRequest returns an empty record of the body of a request with the
// given op code, ready to Decode, or nil for an op code with no request
// body known to this package.
func NewRequest(op int32) Record {
	switch op {
	case OpCreate, OpCreate2, OpCreateContainer:
		return &CreateRequest{}
	case OpCreateTTL:
		return &CreateRequest{HasTTL: true}
	case OpDelete, OpCheck, OpDeleteContainer:
		if op == OpDeleteContainer {
			return &PathRequest{}
		}
		return &PathVersionRequest{}
	case OpExists, OpGetData, OpGetChildren, OpGetChildren2:
		return &PathWatchRequest{}
	case OpSetData:
		return &SetDataRequest{}
	case OpGetACL, OpSync, OpGetAllChildrenNumber, OpGetEphemerals:
		return &PathRequest{}
	case OpSetACL:
		return &SetACLRequest{}
	case OpMulti, OpMultiRead:
		return &MultiRequest{}
	case OpAuth:
		return &AuthPacket{}
	case OpSasl:
		return &SASLToken{}
	case OpSetWatches:
		return &SetWatches{}
	case OpSetWatches2:
		return &SetWatches{V2: true}
	case OpAddWatch, OpCheckWatches, OpRemoveWatches:
		return &PathTypeRequest{}
	case OpReconfig:
		return &ReconfigRequest{}
	case OpPing, OpCloseSession, OpWhoAmI:
		return &Empty{}
	}
	return nil
}
