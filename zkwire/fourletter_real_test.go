package zkwire_test

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zksim/zksim/zkserver"
	"github.com/zksim/zksim/zkwire/jute"
)

// word asks addr a four-letter word.
func word(t *testing.T, addr, w string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	out, err := zkserver.FourLetterWord(ctx, addr, w)
	if err != nil {
		t.Fatalf("%s: %v", w, err)
	}
	return out
}

// shape is a four-letter word's answer with every run of digits (and
// hexadecimal digits after "0x") replaced by N and the version string by
// VERSION: what stays is the format, which the wire server and a real
// server must share.
func shape(s string) string {
	s = regexp.MustCompile(`version: 3\.8\.\d+-\S+,`).ReplaceAllString(s, "version: VERSION,")
	return regexp.MustCompile(`0x[0-9a-f]+|\d+`).ReplaceAllStringFunc(s, func(n string) string {
		if strings.HasPrefix(n, "0x") {
			return "0xN"
		}
		return "N"
	})
}

// consLine is the line cons prints for session sid.
func consLine(t *testing.T, addr string, sid int64) string {
	t.Helper()
	out := word(t, addr, "cons")
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, fmt.Sprintf(",sid=0x%x,", sid)) {
			return l
		}
	}
	t.Fatalf("cons has no line for session 0x%x:\n%s", sid, out)
	return ""
}

var consFields = regexp.MustCompile(`,lop=(\w+),.*?(,lcxid=0x[0-9a-f]+)?,lzxid=0x([0-9a-f]+),lresp=`)

// TestConsMatchesRealServer: cons prints each connection as
// ServerCnxn.dumpConnectionInfo does, with FinalRequestProcessor's names of
// the last op ("GETD", not "getData"; "NA" after a write that failed before
// it was applied; a ping counts, an auth packet does not), the last cxid
// (left out until there is one; a ping's -2 is not kept) and the zxid of
// the last reply, then lresp, llat, minlat, avglat and maxlat; go-zookeeper's
// FLWCons then finds the session. Run against the wire server and a real
// server, the lines agree in format and in those fields.
func TestConsMatchesRealServer(t *testing.T) {
	againstBoth(t, "cons", func(t *testing.T, addr, root string) {
		r := dialRaw(t, addr)
		sess := r.connect(newSession)
		xid := int32(0)
		type step struct {
			name string
			op   int32
			rec  jute.Record
			lop  string
		}
		steps := []step{
			{"create", jute.OpCreate, &jute.CreateRequest{Path: root, ACL: openACL}, "CREA"},
			{"create again", jute.OpCreate, &jute.CreateRequest{Path: root, ACL: openACL}, "NA"},
			{"getData missing", jute.OpGetData, &jute.PathWatchRequest{Path: root + "/none"}, "GETD"},
			{"exists", jute.OpExists, &jute.PathWatchRequest{Path: root}, "EXIS"},
			{"setData", jute.OpSetData, &jute.SetDataRequest{Path: root, Version: -1}, "SETD"},
			{"setData bad version", jute.OpSetData, &jute.SetDataRequest{Path: root, Version: 7}, "NA"},
			{"getChildren2", jute.OpGetChildren2, &jute.PathWatchRequest{Path: root}, "GETC"},
			{"failed multi", jute.OpMulti, &jute.MultiRequest{Ops: []jute.MultiOp{
				{Type: jute.OpCheck, Rec: &jute.PathVersionRequest{Path: root, Version: 9}},
			}}, "MULT"},
			{"sync", jute.OpSync, &jute.PathRequest{Path: root}, "SYNC"},
			{"whoAmI", jute.OpWhoAmI, nil, "HOMI"},
		}
		const wantCxid = ",lcxid=0x0" // the handshake of a new session has cxid 0
		check := func(what, lop, cxid string, zxid int64) {
			t.Helper()
			l := consLine(t, addr, sess.SessionID)
			m := consFields.FindStringSubmatch(l)
			if m == nil || m[1] != lop || m[2] != cxid || m[3] != strconv.FormatInt(zxid, 16) {
				t.Errorf("after %s: cons line %q, want lop=%s%s,lzxid=0x%x", what, l, lop, cxid, zxid)
			}
		}
		// Right after the handshake: the createSession request.
		l := consLine(t, addr, sess.SessionID)
		if m := consFields.FindStringSubmatch(l); m == nil || m[1] != "SESS" || m[2] != wantCxid {
			t.Errorf("after the handshake: cons line %q, want lop=SESS%s", l, wantCxid)
		}
		for _, s := range steps {
			xid++
			h, _ := r.call(xid, s.op, s.rec)
			check(s.name, s.lop, fmt.Sprintf(",lcxid=0x%x", xid), h.Zxid)
		}
		// A ping counts, but its cxid (-2) is not kept; an auth packet
		// does not count.
		ping, _ := r.call(jute.XidPing, jute.OpPing, nil)
		check("ping", "PING", fmt.Sprintf(",lcxid=0x%x", xid), ping.Zxid)
		r.call(jute.XidAuth, jute.OpAuth, &jute.AuthPacket{Scheme: "digest", Auth: []byte("u:p")})
		check("auth", "PING", fmt.Sprintf(",lcxid=0x%x", xid), ping.Zxid)

		// The whole line, digits aside, as the real server prints it.
		const wantShape = " /N.N.N.N:N[N](queued=N,recved=N,sent=N,sid=0xN,lop=PING,est=N,to=N,lcxid=0xN,lzxid=0xN,lresp=N,llat=N,minlat=N,avglat=N,maxlat=N)"
		if got := shape(consLine(t, addr, sess.SessionID)); got != wantShape {
			t.Errorf("cons line shaped %q, want %q", got, wantShape)
		}
		// The connection asking the word: interest ops 0, its word
		// received, nothing sent yet.
		if out := word(t, addr, "cons"); !regexp.MustCompile(`(?m)^ /127\.0\.0\.1:\d+\[0\]\(queued=0,recved=1,sent=0\)$`).MatchString(out) {
			t.Errorf("cons has no line for the asking connection:\n%s", out)
		}

		// go-zookeeper's FLWCons finds the session with its fields.
		c, _ := dial(t, addr, 10*time.Second)
		if _, _, err := c.Get("/"); err != nil {
			t.Fatal(err)
		}
		scs, _ := zk.FLWCons([]string{addr}, 10*time.Second)
		var found *zk.ServerClient
		for _, cl := range scs[0].Clients {
			if cl.SessionID == c.SessionID() {
				found = cl
			}
		}
		if found == nil || found.LastOperation != "GETD" || found.Lcxid != 1 || found.Timeout <= 0 {
			t.Errorf("FLWCons: %+v, want session 0x%x with its last op GETD, cxid 1 (error %v)", found, c.SessionID(), scs[0].Error)
		}
	})
}

// TestSrvrMatchesRealServer: srvr and stat print what ZooKeeper 3.8's
// StatCommand prints, line for line: the version line
// "Zookeeper version: 3.8.0-REVISION, built on yyyy-MM-dd HH:mm zz", the
// latency line with the average as Java prints a double, the counters,
// the zxid in hex, the mode and the node count. go-zookeeper v1.0.4's
// FLWSrvr expects the date of ZooKeeper 3.4 ("built on 02/20/2014 09:09
// GMT") and cannot parse a 3.8 server's answer: it fails the same way on
// both.
func TestSrvrMatchesRealServer(t *testing.T) {
	const srvrShape = "Zookeeper version: VERSION, built on N-N-N N:N UTC\n" +
		"Latency min/avg/max: N/N.N/N\nReceived: N\nSent: N\nConnections: N\nOutstanding: N\n" +
		"Zxid: 0xN\nMode: standalone\nNode count: N\n"
	var flwErr [2]string
	i := 0
	againstBoth(t, "srvr", func(t *testing.T, addr, root string) {
		c, _ := dial(t, addr, 10*time.Second)
		for range 3 {
			if _, _, err := c.Get("/"); err != nil {
				t.Fatal(err)
			}
		}
		out := word(t, addr, "srvr")
		if got := shape(out); got != srvrShape {
			t.Errorf("srvr %q shaped %q, want %q", out, got, srvrShape)
		}
		if !regexp.MustCompile(`\nLatency min/avg/max: \d+/(0|[1-9]\d*)\.\d{1,4}/\d+\n`).MatchString(out) {
			t.Errorf("srvr latency line: %q", out)
		}
		stat := word(t, addr, "stat")
		head, tail, ok := strings.Cut(stat, "\n\n")
		if !ok || !strings.HasPrefix(shape(stat), "Zookeeper version: VERSION, built on N-N-N N:N UTC\nClients:\n") ||
			shape("Zookeeper version: 3.8.0-x, built on 1-1-1 1:1 UTC\n"+tail) != srvrShape {
			t.Errorf("stat %q", stat)
		}
		for _, l := range strings.Split(head, "\n")[2:] {
			if shape(l) != " /N.N.N.N:N[N](queued=N,recved=N,sent=N)" {
				t.Errorf("stat client line %q", l)
			}
		}
		ss, ok := zk.FLWSrvr([]string{addr}, 10*time.Second)
		if ok || ss[0].Error == nil {
			t.Errorf("FLWSrvr parsed a 3.8 answer: %+v", ss[0])
		} else {
			flwErr[i] = ss[0].Error.Error()
		}
		i++
	})
	if flwErr[1] != "" && flwErr[0] != flwErr[1] { // the real half ran
		t.Errorf("FLWSrvr fails differently: wire %q, real %q", flwErr[0], flwErr[1])
	}
}
