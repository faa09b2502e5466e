package zkwire

import (
	"time"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/zkmem"
	"github.com/zksim/zksim/zkwire/jute"
)

// The translation between jute records and zkmem's requests and
// responses.

func codeOf(err error) zksim.Code { return zksim.CodeOf(err) }

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
	return jute.Stat{
		Czxid: s.Czxid, Mzxid: s.Mzxid, Ctime: s.Ctime, Mtime: s.Mtime,
		Version: s.Version, Cversion: s.Cversion, Aversion: s.Aversion,
		EphemeralOwner: s.EphemeralOwner, DataLength: s.DataLength,
		NumChildren: s.NumChildren, Pzxid: s.Pzxid,
	}
}

func isWriteOp(op int32) bool {
	switch op {
	case jute.OpCreate, jute.OpCreate2, jute.OpCreateTTL, jute.OpCreateContainer,
		jute.OpDelete, jute.OpDeleteContainer, jute.OpSetData, jute.OpSetACL,
		jute.OpCheck, jute.OpMulti, jute.OpReconfig:
		return true
	}
	return false
}

// decodeRequest decodes a request body into a zkmem request. A body that
// does not decode gives bad: a write then becomes an error transaction
// (it consumes a zxid, as on a real server) and every request is answered
// MarshallingError.
func decodeRequest(op int32, d *jute.Decoder) (req *zkmem.RemoteRequest, bad bool) {
	rec := jute.NewRequest(op)
	rec.Decode(d)
	if d.Err() == nil {
		if req, ok := toRemote(op, rec); ok {
			return req, false
		}
	}
	if isWriteOp(op) {
		return &zkmem.RemoteRequest{Op: zkmem.OpError}, true
	}
	return &zkmem.RemoteRequest{Op: zkmem.OpPing}, true
}

func createOp(op int32, r *jute.CreateRequest) *zksim.CreateOp {
	o := &zksim.CreateOp{Path: r.Path, Data: r.Data, Mode: zksim.CreateMode(r.Flags), ACL: toACL(r.ACL)}
	if op == jute.OpCreateTTL {
		o.TTL = time.Duration(r.TTL) * time.Millisecond
	}
	return o
}

func toRemote(op int32, rec jute.Record) (*zkmem.RemoteRequest, bool) {
	switch r := rec.(type) {
	case *jute.CreateRequest:
		ttl := int64(-1)
		if op == jute.OpCreateTTL {
			ttl = r.TTL
		}
		return &zkmem.RemoteRequest{Op: zkmem.OpCreate, Path: r.Path, Data: r.Data,
			ACL: toACL(r.ACL), Mode: zksim.CreateMode(r.Flags), TTL: ttl}, true
	case *jute.PathVersionRequest:
		name := zkmem.OpDelete
		if op == jute.OpCheck {
			name = zkmem.OpCheck
		}
		return &zkmem.RemoteRequest{Op: name, Path: r.Path, Version: r.Version}, true
	case *jute.SetDataRequest:
		return &zkmem.RemoteRequest{Op: zkmem.OpSetData, Path: r.Path, Data: r.Data, Version: r.Version}, true
	case *jute.PathWatchRequest:
		name := map[int32]string{jute.OpExists: zkmem.OpExists, jute.OpGetData: zkmem.OpGetData,
			jute.OpGetChildren: zkmem.OpGetChildren, jute.OpGetChildren2: zkmem.OpGetChildren}[op]
		return &zkmem.RemoteRequest{Op: name, Path: r.Path, Watch: r.Watch}, true
	case *jute.PathRequest:
		name := map[int32]string{jute.OpGetACL: zkmem.OpGetACL, jute.OpSync: zkmem.OpSync,
			jute.OpGetAllChildrenNumber: zkmem.OpGetAllChildrenNumber,
			jute.OpGetEphemerals:        zkmem.OpGetEphemerals, jute.OpDeleteContainer: zkmem.OpDeleteCont}[op]
		return &zkmem.RemoteRequest{Op: name, Path: r.Path}, true
	case *jute.SetACLRequest:
		return &zkmem.RemoteRequest{Op: zkmem.OpSetACL, Path: r.Path, ACL: toACL(r.ACL), Version: r.Version}, true
	case *jute.PathTypeRequest:
		name := map[int32]string{jute.OpAddWatch: zkmem.OpAddWatch, jute.OpCheckWatches: zkmem.OpCheckWatches,
			jute.OpRemoveWatches: zkmem.OpRemoveWatches}[op]
		return &zkmem.RemoteRequest{Op: name, Path: r.Path, Kind: r.Type}, true
	case *jute.AuthPacket:
		return &zkmem.RemoteRequest{Op: zkmem.OpAddAuth, Scheme: r.Scheme, Auth: r.Auth}, true
	case *jute.SetWatches:
		return &zkmem.RemoteRequest{Op: zkmem.OpSetWatches, RelZxid: r.RelativeZxid, DataW: r.DataWatches,
			ExistW: r.ExistWatches, ChildW: r.ChildWatches, PersW: r.PersistentWatches,
			RecW: r.PersistentRecursive}, true
	case *jute.ReconfigRequest:
		return &zkmem.RemoteRequest{Op: zkmem.OpReconfig}, true
	case *jute.MultiRequest:
		return multiToRemote(op, r)
	case *jute.Empty:
		name := map[int32]string{jute.OpPing: zkmem.OpPing, jute.OpCloseSession: zkmem.OpCloseSession,
			jute.OpWhoAmI: zkmem.OpWhoAmI}[op]
		return &zkmem.RemoteRequest{Op: name}, true
	}
	return nil, false
}

// multiToRemote checks that a multi holds only writes and a multiRead only
// reads ("Mixing different kind of ops" is a marshalling error).
func multiToRemote(op int32, r *jute.MultiRequest) (*zkmem.RemoteRequest, bool) {
	if op == jute.OpMultiRead {
		req := &zkmem.RemoteRequest{Op: zkmem.OpMultiRead}
		for _, o := range r.Ops {
			pw, ok := o.Rec.(*jute.PathWatchRequest)
			if !ok {
				return nil, false
			}
			req.Reads = append(req.Reads, zkmem.RemoteRead{Children: o.Type == jute.OpGetChildren, Path: pw.Path})
		}
		return req, true
	}
	req := &zkmem.RemoteRequest{Op: zkmem.OpMulti}
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
	req.Kinds = multiKinds(r)
	return req, true
}

func multiKinds(r *jute.MultiRequest) []int32 {
	out := make([]int32, len(r.Ops))
	for i, o := range r.Ops {
		out[i] = o.Type
	}
	return out
}

// replyBody is the body of a successful reply.
func replyBody(op int32, req *zkmem.RemoteRequest, resp *zkmem.RemoteResponse) jute.Record {
	switch op {
	case jute.OpCreate:
		return &jute.PathRequest{Path: resp.Path}
	case jute.OpCreate2, jute.OpCreateTTL, jute.OpCreateContainer:
		return &jute.Create2Response{Path: resp.Path, Stat: fromStat(&resp.Stat)}
	case jute.OpExists, jute.OpSetData, jute.OpSetACL:
		return &jute.StatResponse{Stat: fromStat(&resp.Stat)}
	case jute.OpGetData:
		return &jute.GetDataResponse{Data: resp.Data, Stat: fromStat(&resp.Stat)}
	case jute.OpGetChildren:
		return &jute.StringsResponse{Strings: resp.Children}
	case jute.OpGetChildren2:
		return &jute.GetChildren2Response{Children: resp.Children, Stat: fromStat(&resp.Stat)}
	case jute.OpGetACL:
		return &jute.GetACLResponse{ACL: fromACL(resp.ACL), Stat: fromStat(&resp.Stat)}
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
			infos[i] = jute.ClientInfo{AuthScheme: id.Scheme, User: id.User}
		}
		return &jute.WhoAmIResponse{ClientInfo: infos}
	case jute.OpMulti:
		return multiReply(req, resp)
	case jute.OpMultiRead:
		out := &jute.MultiResponse{Results: make([]jute.MultiResult, len(resp.Results))}
		for i, res := range resp.Results {
			switch {
			case res.Err != nil:
				out.Results[i] = jute.MultiResult{Type: jute.OpError, Err: int32(codeOf(res.Err))}
			case req.Reads[i].Children:
				out.Results[i] = jute.MultiResult{Type: jute.OpGetChildren, Rec: &jute.StringsResponse{Strings: res.Children}}
			default:
				out.Results[i] = jute.MultiResult{Type: jute.OpGetData, Rec: &jute.GetDataResponse{Data: res.Data, Stat: fromStat(&res.Stat)}}
			}
		}
		return out
	}
	return nil
}

// multiReply encodes a multi's results: on failure every op is an error
// result (0 for the ops before the failing one, its code, then
// RuntimeInconsistency); on success each op's own result.
func multiReply(req *zkmem.RemoteRequest, resp *zkmem.RemoteResponse) *jute.MultiResponse {
	out := &jute.MultiResponse{Results: make([]jute.MultiResult, len(resp.Results))}
	failed := false
	for _, res := range resp.Results {
		if res.Err != nil {
			failed = true
		}
	}
	for i, res := range resp.Results {
		if failed {
			out.Results[i] = jute.MultiResult{Type: jute.OpError, Err: int32(codeOf(res.Err))}
			continue
		}
		switch req.Kinds[i] {
		case jute.OpCreate:
			out.Results[i] = jute.MultiResult{Type: jute.OpCreate, Rec: &jute.PathRequest{Path: res.Path}}
		case jute.OpCreate2, jute.OpCreateTTL, jute.OpCreateContainer:
			out.Results[i] = jute.MultiResult{Type: jute.OpCreate2, Rec: &jute.Create2Response{Path: res.Path, Stat: fromStat(&res.Stat)}}
		case jute.OpDelete:
			out.Results[i] = jute.MultiResult{Type: jute.OpDelete}
		case jute.OpSetData:
			out.Results[i] = jute.MultiResult{Type: jute.OpSetData, Rec: &jute.StatResponse{Stat: fromStat(&res.Stat)}}
		case jute.OpCheck:
			out.Results[i] = jute.MultiResult{Type: jute.OpCheck}
		}
	}
	return out
}
