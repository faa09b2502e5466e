package jute

import "errors"

// ErrBadOp is a multi holding an op code a multi cannot hold.
var ErrBadOp = errors.New("jute: invalid op in multi")

// The response records of module org.apache.zookeeper.proto.

// StatResponse is the body of the responses of exists, setData, setACL and
// check.
type StatResponse struct {
	Stat Stat
}

// Encode implements Record.
func (r *StatResponse) Encode(e *Encoder) { r.Stat.Encode(e) }

// Decode implements Record.
func (r *StatResponse) Decode(d *Decoder) { r.Stat.Decode(d) }

// Create2Response is the body of the responses of create2, createTTL and
// createContainer (create answers with a PathRequest: the path only).
type Create2Response struct {
	Path string
	Stat Stat
}

// Encode implements Record.
func (r *Create2Response) Encode(e *Encoder) { e.String(r.Path); r.Stat.Encode(e) }

// Decode implements Record.
func (r *Create2Response) Decode(d *Decoder) { r.Path = d.String(); r.Stat.Decode(d) }

// GetDataResponse is the body of the response of getData.
type GetDataResponse struct {
	Data []byte
	Stat Stat
}

// Encode implements Record.
func (r *GetDataResponse) Encode(e *Encoder) { e.Buffer(r.Data); r.Stat.Encode(e) }

// Decode implements Record.
func (r *GetDataResponse) Decode(d *Decoder) { r.Data = d.Buffer(); r.Stat.Decode(d) }

// StringsResponse is the body of the responses of getChildren and
// getEphemerals.
type StringsResponse struct {
	Strings []string
}

// Encode implements Record.
func (r *StringsResponse) Encode(e *Encoder) { e.Strings(r.Strings) }

// Decode implements Record.
func (r *StringsResponse) Decode(d *Decoder) { r.Strings = d.Strings() }

// GetChildren2Response is the body of the response of getChildren2.
type GetChildren2Response struct {
	Children []string
	Stat     Stat
}

// Encode implements Record.
func (r *GetChildren2Response) Encode(e *Encoder) { e.Strings(r.Children); r.Stat.Encode(e) }

// Decode implements Record.
func (r *GetChildren2Response) Decode(d *Decoder) { r.Children = d.Strings(); r.Stat.Decode(d) }

// GetACLResponse is the body of the response of getACL.
type GetACLResponse struct {
	ACL  []ACL
	Stat Stat
}

// Encode implements Record.
func (r *GetACLResponse) Encode(e *Encoder) { encodeACLs(e, r.ACL); r.Stat.Encode(e) }

// Decode implements Record.
func (r *GetACLResponse) Decode(d *Decoder) { r.ACL = decodeACLs(d); r.Stat.Decode(d) }

// IntResponse is the body of the responses of getAllChildrenNumber, and
// ErrorResponse's layout (addWatch answers with one holding 0).
type IntResponse struct {
	N int32
}

// Encode implements Record.
func (r *IntResponse) Encode(e *Encoder) { e.Int(r.N) }

// Decode implements Record.
func (r *IntResponse) Decode(d *Decoder) { r.N = d.Int() }

// WhoAmIResponse is the body of the response of whoAmI.
type WhoAmIResponse struct {
	ClientInfo []ClientInfo
}

// Encode implements Record.
func (r *WhoAmIResponse) Encode(e *Encoder) {
	if r.ClientInfo == nil {
		e.Int(-1)
		return
	}
	e.Int(int32(len(r.ClientInfo)))
	for i := range r.ClientInfo {
		r.ClientInfo[i].Encode(e)
	}
}

// Decode implements Record.
func (r *WhoAmIResponse) Decode(d *Decoder) {
	n, ok := d.vectorLen(8)
	if !ok || n < 0 {
		r.ClientInfo = nil
		return
	}
	r.ClientInfo = make([]ClientInfo, n)
	for i := range r.ClientInfo {
		r.ClientInfo[i].Decode(d)
	}
}

// MultiResult is one result of a multi or multiRead: its type (the op code,
// or OpError with Err) and its record: *PathRequest for create,
// *Create2Response for create2, *StatResponse for setData, nil for delete
// and check, *StringsResponse for getChildren, *GetDataResponse for
// getData; for OpError the record is an IntResponse holding Err, written
// by Encode.
type MultiResult struct {
	Type int32
	Err  int32
	Rec  Record
}

// MultiResponse is the body of the response of multi and multiRead.
type MultiResponse struct {
	Results []MultiResult
}

// Encode implements Record.
func (r *MultiResponse) Encode(e *Encoder) {
	for _, res := range r.Results {
		h := MultiHeader{Type: res.Type}
		if res.Type == OpError {
			h.Err = res.Err
		}
		h.Encode(e)
		if res.Type == OpError {
			e.Int(res.Err)
		} else if res.Rec != nil {
			res.Rec.Encode(e)
		}
	}
	h := MultiHeader{Type: -1, Done: true, Err: -1}
	h.Encode(e)
}

// Decode implements Record.
func (r *MultiResponse) Decode(d *Decoder) {
	r.Results = nil
	for d.err == nil {
		var h MultiHeader
		h.Decode(d)
		if d.err != nil || h.Done {
			return
		}
		res := MultiResult{Type: h.Type}
		switch h.Type {
		case OpError:
			res.Err = d.Int()
		case OpCreate:
			res.Rec = &PathRequest{}
		case OpCreate2:
			res.Rec = &Create2Response{}
		case OpSetData:
			res.Rec = &StatResponse{}
		case OpDelete, OpCheck:
		case OpGetChildren:
			res.Rec = &StringsResponse{}
		case OpGetData:
			res.Rec = &GetDataResponse{}
		default:
			d.fail(ErrBadOp)
			return
		}
		if res.Rec != nil {
			res.Rec.Decode(d)
		}
		r.Results = append(r.Results, res)
	}
}
