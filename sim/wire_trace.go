package sim

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/zksim/zksim/zkmem"
	"github.com/zksim/zksim/zkwire/jute"
)

// How a go-zookeeper client's frames read in the trace.

// wireSummary renders the outcome of a frame for the trace.
func wireSummary(req *request) string {
	r := req.wire
	if !r.replied {
		if req.hit != zkmem.NoFault {
			return "ErrConnectionLoss"
		}
		return "no reply"
	}
	resp := &r.resp
	if resp.Err != nil {
		if req.desc.Op == zkmem.OpExists && errName(resp.Err) == "ErrNoNode" {
			return "absent"
		}
		return errName(resp.Err)
	}
	switch req.desc.Op {
	case zkmem.OpCreate:
		return resp.Path
	case zkmem.OpExists:
		if resp.Stat == nil {
			return "absent"
		}
		return fmt.Sprintf("v%d czxid=%d", resp.Stat.Version, resp.Stat.Czxid)
	case zkmem.OpGetData:
		if resp.Stat == nil {
			return fmt.Sprintf("%d bytes", len(resp.Data))
		}
		return fmt.Sprintf("%d bytes v%d", len(resp.Data), resp.Stat.Version)
	case zkmem.OpSetData, zkmem.OpSetACL:
		if resp.Stat != nil {
			return fmt.Sprintf("v%d", resp.Stat.Version)
		}
	case zkmem.OpGetChildren, zkmem.OpGetEphemerals:
		return listNames(resp.Children)
	case zkmem.OpMulti:
		return fmt.Sprintf("ok (%d ops)", len(resp.Results))
	}
	return "ok"
}

// frameLabel says what a frame the server sent is, for a FIFO item: nil
// req for a notification, a ping's reply or the handshake's answer.
func frameLabel(p *pipe, b []byte) (label string, isReply bool) {
	if !p.answered {
		p.answered = true
		var r jute.ConnectResponse
		if jute.Unmarshal(b[4:], &r) == nil && r.SessionID == 0 {
			return fmt.Sprintf("connect answer #%d: session expired", p.n), false
		}
		return fmt.Sprintf("connect answer #%d: session %#x", p.n, r.SessionID), false
	}
	// The header's xid (its first field) says what the frame is; a reply,
	// the common case, needs no decoder.
	var xid int32
	if len(b) >= 8 {
		xid = int32(binary.BigEndian.Uint32(b[4:8]))
	}
	switch xid {
	case jute.XidNotification:
		var h jute.ReplyHeader
		var ev jute.WatcherEvent
		d := jute.NewDecoder(b[4:])
		h.Decode(d)
		ev.Decode(d)
		return fmt.Sprintf("event %v %s", zkEventType(ev.Type), ev.Path), false
	case jute.XidPing:
		return "reply ping", false
	}
	return "", true
}

// normalizeHex replaces every GUID written as 32 hex digits (as
// go-zookeeper's protected names have them) by {gN}, as normalize does
// for UUIDs.
func (t *tracer) normalizeHex(line string) string {
	if !strings.Contains(line, "_c_") {
		return line
	}
	var b strings.Builder
	last := 0
	for i := 0; i+32 <= len(line); i++ {
		if (i > 0 && isHex(line[i-1])) || (i+32 < len(line) && isHex(line[i+32])) || !allHex(line[i:i+32]) {
			continue
		}
		g := line[i : i+32]
		b.WriteString(line[last:i])
		b.WriteString(t.guidLabel(g))
		last = i + 32
		i += 31
	}
	if last == 0 {
		return line
	}
	b.WriteString(line[last:])
	return b.String()
}

func allHex(s string) bool {
	for i := range len(s) {
		if !isHex(s[i]) {
			return false
		}
	}
	return true
}
