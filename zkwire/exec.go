package zkwire

import (
	"encoding/binary"
	"time"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/zkmem"
	"github.com/zksim/zksim/zkwire/jute"
)

// The translation between jute records and zkmem's requests and
// responses.

func toACL(in []jute.ACL) []zksim.ACL {
	if in == nil {
		return nil
	}
	out := make([]zksim.ACL, len(in))
	for i, a := range in {
		out[i] = zksim.ACL{Perms: a.Perms, Scheme: a.ID.Scheme, ID: a.ID.ID}
	}
	return out
}

func fromACL(in []zksim.ACL) []jute.ACL {
	out := make([]jute.ACL, len(in))
	for i, a := range in {
		out[i] = jute.ACL{Perms: a.Perms, ID: jute.ID{Scheme: a.Scheme, ID: a.ID}}
	}
	return out
}

func fromStat(s *zksim.Stat) jute.Stat {
	if s == nil {
		return jute.Stat{}
	}
	return jute.Stat{
		Czxid: s.Czxid, Mzxid: s.Mzxid, Ctime: s.Ctime, Mtime: s.Mtime,
		Version: s.Version, Cversion: s.Cversion, Aversion: s.Aversion,
		EphemeralOwner: s.EphemeralOwner, DataLength: s.DataLength,
		NumChildren: s.NumChildren, Pzxid: s.Pzxid,
	}
}

// decodeRequest decodes a request body into a zkmem request (for a
// multiRead, one request per read). ok is false for a body that does not
// decode, which the server answers MarshallingError.
func decodeRequest(op int32, d *jute.Decoder) (req *zkmem.Request, reads []*zkmem.Request, ok bool) {
	rec := jute.NewRequest(op)
	rec.Decode(d)
	if d.Err() != nil {
		return nil, nil, false
	}
	if m, isMulti := rec.(*jute.MultiRequest); isMulti && op == jute.OpMultiRead {
		for _, o := range m.Ops {
			pw, isRead := o.Rec.(*jute.PathWatchRequest)
			if !isRead {
				return nil, nil, false // "Invalid type of readOp"
			}
			r := &zkmem.Request{Op: zkmem.OpGetData, Path: pw.Path}
			if o.Type == jute.OpGetChildren {
				r.Op = zkmem.OpGetChildren
			}
			reads = append(reads, r)
		}
		return nil, reads, true
	}
	req, ok = toRequest(op, rec)
	return req, nil, ok
}

func createOp(op int32, r *jute.CreateRequest) *zksim.CreateOp {
	o := &zksim.CreateOp{Path: r.Path, Data: r.Data, Mode: zksim.CreateMode(r.Flags), ACL: toACL(r.ACL)}
	if op == jute.OpCreateTTL {
		o.TTL = time.Duration(r.TTL) * time.Millisecond
	}
	return o
}

var pathWatchOps = map[int32]zkmem.OpCode{
	jute.OpExists: zkmem.OpExists, jute.OpGetData: zkmem.OpGetData,
	jute.OpGetChildren: zkmem.OpGetChildren, jute.OpGetChildren2: zkmem.OpGetChildren,
}

var pathOps = map[int32]zkmem.OpCode{
	jute.OpGetACL: zkmem.OpGetACL, jute.OpSync: zkmem.OpSync,
	jute.OpGetAllChildrenNumber: zkmem.OpGetAllChildrenNumber, jute.OpGetEphemerals: zkmem.OpGetEphemerals,
}

var emptyOps = map[int32]zkmem.OpCode{
	jute.OpPing: zkmem.OpPing, jute.OpCloseSession: zkmem.OpCloseSession, jute.OpWhoAmI: zkmem.OpWhoAmI,
}

func toRequest(op int32, rec jute.Record) (*zkmem.Request, bool) {
	switch r := rec.(type) {
	case *jute.CreateRequest:
		ttl := time.Duration(-1)
		if op == jute.OpCreateTTL {
			ttl = time.Duration(r.TTL) * time.Millisecond
		}
		return &zkmem.Request{Op: zkmem.OpCreate, Path: r.Path, Data: r.Data,
			ACL: toACL(r.ACL), Mode: zksim.CreateMode(r.Flags), TTL: ttl}, true
	case *jute.PathVersionRequest:
		o := zkmem.OpDelete
		if op == jute.OpCheck {
			o = zkmem.OpCheck
		}
		return &zkmem.Request{Op: o, Path: r.Path, Version: r.Version}, true
	case *jute.SetDataRequest:
		return &zkmem.Request{Op: zkmem.OpSetData, Path: r.Path, Data: r.Data, Version: r.Version}, true
	case *jute.PathWatchRequest:
		return &zkmem.Request{Op: pathWatchOps[op], Path: r.Path, Watch: r.Watch}, true
	case *jute.PathRequest:
		return &zkmem.Request{Op: pathOps[op], Path: r.Path}, true
	case *jute.SetACLRequest:
		return &zkmem.Request{Op: zkmem.OpSetACL, Path: r.Path, ACL: toACL(r.ACL), Version: r.Version}, true
	case *jute.PathTypeRequest:
		switch op {
		case jute.OpAddWatch:
			return &zkmem.Request{Op: zkmem.OpAddWatch, Path: r.Path, AddWatchMode: zksim.AddWatchMode(r.Type)}, true
		case jute.OpCheckWatches:
			return &zkmem.Request{Op: zkmem.OpCheckWatches, Path: r.Path, WatcherKind: zksim.WatcherKind(r.Type)}, true
		default:
			return &zkmem.Request{Op: zkmem.OpRemoveWatches, Path: r.Path, WatcherKind: zksim.WatcherKind(r.Type)}, true
		}
	case *jute.ReconfigRequest:
		// A standalone server never reads the body; an ensemble's leader
		// checks it (zkmem.Reconfig).
		return &zkmem.Request{Op: zkmem.OpReconfig, Reconfig: &zkmem.Reconfig{
			JoiningServers: r.JoiningServers, LeavingServers: r.LeavingServers,
			NewMembers: r.NewMembers, CurConfigID: r.CurConfigID,
		}}, true
	case *jute.AuthPacket:
		return &zkmem.Request{Op: zkmem.OpAddAuth, AuthScheme: r.Scheme, Auth: r.Auth}, true
	case *jute.SASLToken:
		return &zkmem.Request{Op: zkmem.OpSASL, Auth: r.Token}, true
	case *jute.SetWatches:
		return &zkmem.Request{Op: zkmem.OpSetWatches, SetWatches: &zkmem.SetWatches{
			RelativeZxid: r.RelativeZxid, Data: r.DataWatches, Exist: r.ExistWatches, Child: r.ChildWatches,
			Persistent: r.PersistentWatches, Recursive: r.PersistentRecursive,
		}}, true
	case *jute.MultiRequest:
		return multiRequest(r)
	case *jute.Empty:
		return &zkmem.Request{Op: emptyOps[op]}, true
	}
	return nil, false
}

// multiRequest checks that a multi holds only writes ("Mixing different
// kind of ops" is a marshalling error).
func multiRequest(r *jute.MultiRequest) (*zkmem.Request, bool) {
	req := &zkmem.Request{Op: zkmem.OpMulti}
	for _, o := range r.Ops {
		switch rec := o.Rec.(type) {
		case *jute.CreateRequest:
			req.Ops = append(req.Ops, createOp(o.Type, rec))
		case *jute.PathVersionRequest:
			if o.Type == jute.OpCheck {
				req.Ops = append(req.Ops, &zksim.CheckOp{Path: rec.Path, Version: rec.Version})
			} else {
				req.Ops = append(req.Ops, &zksim.DeleteOp{Path: rec.Path, Version: rec.Version})
			}
		case *jute.SetDataRequest:
			req.Ops = append(req.Ops, &zksim.SetOp{Path: rec.Path, Data: rec.Data, Version: rec.Version})
		default:
			return nil, false
		}
	}
	if len(req.Ops) > 0 {
		req.Path = req.Ops[0].OpPath()
	}
	return req, true
}

// appendReply returns the frame of a successful reply to the wire op op,
// as jute.AppendReply(nil, hdr, replyBody(op, req, resp)) does, in one
// allocation: the bodies of the common replies are encoded from the
// stack, not made Records on the heap.
func appendReply(hdr jute.ReplyHeader, op int32, req *zkmem.Request, resp *zkmem.Response) []byte {
	e := jute.Encoder{B: jute.AppendReply(make([]byte, 0, 128+len(resp.Data)), hdr, nil)}
	switch op {
	case jute.OpGetData:
		r := jute.GetDataResponse{Data: resp.Data, Stat: fromStat(resp.Stat)}
		r.Encode(&e)
	case jute.OpExists, jute.OpSetData, jute.OpSetACL:
		r := jute.StatResponse{Stat: fromStat(resp.Stat)}
		r.Encode(&e)
	case jute.OpCreate:
		r := jute.PathRequest{Path: resp.Path}
		r.Encode(&e)
	case jute.OpCreate2, jute.OpCreateTTL, jute.OpCreateContainer:
		r := jute.Create2Response{Path: resp.Path, Stat: fromStat(resp.Stat)}
		r.Encode(&e)
	default:
		e.B = jute.Marshal(e.B, replyBody(op, req, resp))
	}
	binary.BigEndian.PutUint32(e.B, uint32(len(e.B)-4))
	return e.B
}

// replyBody is the body of a successful reply to the wire op op.
func replyBody(op int32, req *zkmem.Request, resp *zkmem.Response) jute.Record {
	switch op {
	case jute.OpCreate:
		return &jute.PathRequest{Path: resp.Path}
	case jute.OpCreate2, jute.OpCreateTTL, jute.OpCreateContainer:
		return &jute.Create2Response{Path: resp.Path, Stat: fromStat(resp.Stat)}
	case jute.OpExists, jute.OpSetData, jute.OpSetACL:
		return &jute.StatResponse{Stat: fromStat(resp.Stat)}
	case jute.OpGetData:
		return &jute.GetDataResponse{Data: resp.Data, Stat: fromStat(resp.Stat)}
	case jute.OpGetChildren:
		return &jute.StringsResponse{Strings: resp.Children}
	case jute.OpGetChildren2:
		return &jute.GetChildren2Response{Children: resp.Children, Stat: fromStat(resp.Stat)}
	case jute.OpGetACL:
		return &jute.GetACLResponse{ACL: fromACL(resp.ACL), Stat: fromStat(resp.Stat)}
	case jute.OpGetAllChildrenNumber:
		return &jute.IntResponse{N: resp.Count}
	case jute.OpGetEphemerals:
		return &jute.StringsResponse{Strings: resp.Children}
	case jute.OpSync:
		return &jute.PathRequest{Path: req.Path}
	case jute.OpAddWatch:
		return &jute.IntResponse{N: 0}
	case jute.OpWhoAmI:
		infos := make([]jute.ClientInfo, len(resp.Identities))
		for i, id := range resp.Identities {
			infos[i] = jute.ClientInfo{AuthScheme: id.Scheme, User: id.ID}
		}
		return &jute.WhoAmIResponse{ClientInfo: infos}
	case jute.OpMulti:
		return multiReply(req, resp)
	}
	return nil
}

// multiReply encodes a multi's results: on failure every op is an error
// result (0 for the ops before the failing one, its code, then
// RuntimeInconsistency); on success each op's own result: a plain create
// its path, a TTL or container create (create2 on the wire) its path and
// Stat.
func multiReply(req *zkmem.Request, resp *zkmem.Response) *jute.MultiResponse {
	out := &jute.MultiResponse{Results: make([]jute.MultiResult, len(resp.Results))}
	failed := false
	for _, res := range resp.Results {
		if res.Err != nil {
			failed = true
		}
	}
	for i, res := range resp.Results {
		if failed {
			out.Results[i] = jute.MultiResult{Type: jute.OpError, Err: int32(zksim.CodeOf(res.Err))}
			continue
		}
		switch op := req.Ops[i].(type) {
		case *zksim.CreateOp:
			if op.Mode.IsTTL() || op.Mode.IsContainer() {
				out.Results[i] = jute.MultiResult{Type: jute.OpCreate2, Rec: &jute.Create2Response{Path: res.Path, Stat: fromStat(res.Stat)}}
			} else {
				out.Results[i] = jute.MultiResult{Type: jute.OpCreate, Rec: &jute.PathRequest{Path: res.Path}}
			}
		case *zksim.DeleteOp:
			out.Results[i] = jute.MultiResult{Type: jute.OpDelete}
		case *zksim.SetOp:
			out.Results[i] = jute.MultiResult{Type: jute.OpSetData, Rec: &jute.StatResponse{Stat: fromStat(res.Stat)}}
		case *zksim.CheckOp:
			out.Results[i] = jute.MultiResult{Type: jute.OpCheck}
		}
	}
	return out
}
