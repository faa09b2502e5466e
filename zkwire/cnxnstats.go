package zkwire

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/zksim/zksim/zkmem"
	"github.com/zksim/zksim/zkwire/jute"
)

// cnxnStats are a connection's figures as the cons word prints them
// (ServerCnxn's): the last request answered, its cxid and zxid, when it was
// answered and the request latencies in whole milliseconds. A request
// counts once answered, as FinalRequestProcessor counts it: pings and the
// handshake of a new session included, auth packets and four-letter words
// not.
type cnxnStats struct {
	mu       sync.Mutex
	lastOp   string // "NA" until a request is answered
	lastCxid int64  // -1 until a request with a cxid ≥ 0 is answered
	lastZxid int64  // -1 until a request is answered
	lastResp int64  // when the last request was answered, in ms since the server started
	lastLat  int64
	minLat   int64 // math.MaxInt64 while count is 0
	maxLat   int64
	totalLat int64
	count    int64
}

func newCnxnStats() cnxnStats {
	return cnxnStats{lastOp: "NA", lastCxid: -1, lastZxid: -1, minLat: math.MaxInt64}
}

// update records an answered request (ServerCnxn.updateStatsForResponse):
// its cxid (kept only when ≥ 0: pings and setWatches carry special ones),
// the zxid its reply carried, its op as cons names it, and when it came
// in and was answered.
func (st *cnxnStats) update(srv *Server, cxid int32, zxid int64, op string, start, end time.Time) {
	lat := end.Sub(start).Milliseconds()
	st.mu.Lock()
	defer st.mu.Unlock()
	if cxid >= 0 {
		st.lastCxid = int64(cxid)
	}
	st.lastZxid, st.lastOp = zxid, op
	st.lastResp = end.Sub(srv.start).Milliseconds()
	st.lastLat = lat
	st.minLat = min(st.minLat, lat)
	st.maxLat = max(st.maxLat, lat)
	st.totalLat += lat
	st.count++
}

// write appends cons's figures of a connection with a session, from
// ",lcxid" (left out while there is none) to ",maxlat=N".
func (st *cnxnStats) write(b *strings.Builder) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.lastCxid >= 0 {
		fmt.Fprintf(b, ",lcxid=0x%x", st.lastCxid)
	}
	minLat, avgLat := st.minLat, int64(0)
	if st.count == 0 {
		minLat = 0
	} else {
		avgLat = st.totalLat / st.count
	}
	fmt.Fprintf(b, ",lzxid=0x%x,lresp=%d,llat=%d,minlat=%d,avglat=%d,maxlat=%d",
		uint64(st.lastZxid), st.lastResp, st.lastLat, minLat, avgLat, st.maxLat)
}

// lastOpName returns the name cons gives the last op of a connection
// (FinalRequestProcessor's lastOp), "NA" for op codes it does not name.
// A write that fails before it is applied, in PrepRequestProcessor, is an
// error transaction: FinalRequestProcessor names it "NA" too.
func lastOpName(op int32, failed bool) string {
	if failed && prepWrites[op] {
		return "NA"
	}
	if s, ok := consOps[op]; ok {
		return s
	}
	return "NA"
}

// consOps are FinalRequestProcessor's names of the ops.
var consOps = map[int32]string{
	jute.OpPing: "PING", jute.OpCreateSession: "SESS", jute.OpMulti: "MULT", jute.OpMultiRead: "MLTR",
	jute.OpCreate: "CREA", jute.OpCreate2: "CREA", jute.OpCreateTTL: "CREA", jute.OpCreateContainer: "CREA",
	jute.OpDelete: "DELE", jute.OpSetData: "SETD", jute.OpReconfig: "RECO", jute.OpSetACL: "SETA",
	jute.OpCloseSession: "CLOS", jute.OpSync: "SYNC", jute.OpCheck: "CHEC", jute.OpExists: "EXIS",
	jute.OpGetData: "GETD", jute.OpSetWatches: "SETW", jute.OpSetWatches2: "STW2", jute.OpAddWatch: "ADDW",
	jute.OpGetACL: "GETA", jute.OpGetChildren: "GETC", jute.OpGetChildren2: "GETC",
	jute.OpGetAllChildrenNumber: "GETACN", jute.OpCheckWatches: "CHKW", jute.OpRemoveWatches: "REMW",
	jute.OpWhoAmI: "HOMI", jute.OpGetEphemerals: "GETE",
}

// prepWrites are the ops PrepRequestProcessor turns into a transaction, an
// error transaction when they fail there.
var prepWrites = map[int32]bool{
	jute.OpCreate: true, jute.OpCreate2: true, jute.OpCreateTTL: true, jute.OpCreateContainer: true,
	jute.OpDelete: true, jute.OpSetData: true, jute.OpReconfig: true, jute.OpSetACL: true, jute.OpCheck: true,
}

// latency keeps the server's min/avg/max request latency in whole
// milliseconds, as srvr, stat and mntr report it (ServerStats).
type latency struct {
	mu       sync.Mutex
	n        int64
	sum      int64
	min, max int64
}

func (l *latency) add(d time.Duration) {
	ms := d.Milliseconds()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n == 0 || ms < l.min {
		l.min = ms
	}
	l.max = max(l.max, ms)
	l.n++
	l.sum += ms
}

// get returns the minimum, the average as the server prints it (rounded
// half up to 4 decimals, then Java's Double.toString) and the maximum.
func (l *latency) get() (min int64, avg string, max int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n == 0 {
		return 0, "0.0", 0
	}
	a := float64(l.sum) / float64(l.n)
	return l.min, javaDouble(math.Floor(a*1e4+0.5) / 1e4), l.max
}

// javaDouble formats v as Java's Double.toString does: the shortest
// decimal that reads back as v, with at least one digit after the point,
// in computerized scientific notation ("1.0E-4") outside [1e-3, 1e7).
func javaDouble(v float64) string {
	if v == 0 {
		return "0.0"
	}
	if a := math.Abs(v); a >= 1e-3 && a < 1e7 {
		s := strconv.FormatFloat(v, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	s := strconv.FormatFloat(v, 'E', -1, 64) // "1E-04", "1.5E+07"
	mant, exp, _ := strings.Cut(s, "E")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	n, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(n)
}

// answered counts a request answered, as FinalRequestProcessor does: in
// the connection's figures (cons) and the server's latency (srvr).
func (c *conn) answered(h jute.RequestHeader, zxid int64, failed bool, start time.Time) {
	end := time.Now()
	c.stats.update(c.srv, h.Xid, zxid, lastOpName(h.Type, failed), start, end)
	c.srv.lat.add(end.Sub(start))
}

// countReply counts the running request answered before its reply is
// queued, as FinalRequestProcessor updates a connection's figures before
// it sends the response: a cons that follows the reply sees the request
// (run counts the others, and none twice).
func (c *conn) countReply(hdr jute.ReplyHeader, resp *zkmem.Response) {
	op := c.cur.op
	if c.cur.start.IsZero() || op == jute.OpAuth || op == jute.OpCloseSession || resp.Closed {
		return
	}
	c.answered(jute.RequestHeader{Xid: c.cur.xid, Type: op}, hdr.Zxid, resp.Err != nil, c.cur.start)
	c.cur.counted = true
}
