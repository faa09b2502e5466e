package zkwire

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"
)

// Version is what srvr, stat and mntr report as the server's version.
const Version = "3.8.0-zksim, built on 1970-01-01 00:00 UTC"

// knownWords are the four-letter words a 3.8 server knows
// (FourLetterCommands); any other first four bytes are a frame length.
var knownWords = []string{"conf", "cons", "crst", "dirs", "dump", "envi", "gtmk", "ruok", "stmk",
	"srvr", "srst", "stat", "wchc", "wchp", "wchs", "mntr", "isro", "hash"}

var wordByLen = func() map[int32]string {
	m := make(map[int32]string, len(knownWords))
	for _, w := range knownWords {
		m[int32(uint32(w[0])<<24|uint32(w[1])<<16|uint32(w[2])<<8|uint32(w[3]))] = w
	}
	return m
}()

// fourLetterWord reports whether a first frame length is a four-letter
// word.
func fourLetterWord(n int32) (string, bool) {
	w, ok := wordByLen[n]
	return w, ok
}

// fourLetter answers a four-letter word and closes the connection.
func (c *conn) fourLetter(word string) {
	var b strings.Builder
	if !c.srv.words[word] {
		fmt.Fprintf(&b, "%s is not executed because it is not in the whitelist.\n", word)
	} else {
		c.srv.answer(&b, word)
	}
	w := bufio.NewWriter(c.nc)
	w.WriteString(b.String())
	w.Flush()
}

// writeBrief writes the start of a connection's line in stat and cons
// (ServerCnxn.dumpConnectionInfo), up to the packets sent, the closing
// parenthesis left to the caller: the peer, its interest ops (0 for the
// connection asking the word, which the server is answering; 1, reading,
// for the others), the requests queued, the packets received and sent.
func (c *conn) writeBrief(b *strings.Builder) {
	interest := 1
	if c.word.Load() {
		interest = 0
	}
	fmt.Fprintf(b, " /%s[%d](queued=0,recved=%d,sent=%d", c.remote, interest, c.recv.Load(), c.sent.Load())
}

func (s *Server) answer(b *strings.Builder, word string) {
	st := s.zk.Stats()
	min, avg, max := s.lat.get()
	conns := s.connList()
	switch word {
	case "ruok":
		b.WriteString("imok")
	case "isro":
		b.WriteString("rw")
	case "srvr", "stat":
		fmt.Fprintf(b, "Zookeeper version: %s\n", Version)
		if word == "stat" {
			b.WriteString("Clients:\n")
			for _, c := range conns {
				c.writeBrief(b)
				b.WriteString(")\n")
			}
			b.WriteString("\n")
		}
		fmt.Fprintf(b, "Latency min/avg/max: %d/%s/%d\n", min, avg, max)
		fmt.Fprintf(b, "Received: %d\nSent: %d\nConnections: %d\nOutstanding: 0\n", s.received.Load(), s.sent.Load(), len(conns))
		fmt.Fprintf(b, "Zxid: 0x%x\nMode: standalone\nNode count: %d\n", st.LastZxid, st.Nodes)
	case "mntr":
		rows := []struct {
			k string
			v any
		}{
			{"zk_version", Version}, {"zk_server_state", "standalone"},
			{"zk_ephemerals_count", st.Ephemerals}, {"zk_num_alive_connections", len(conns)},
			{"zk_avg_latency", avg}, {"zk_min_latency", min}, {"zk_max_latency", max},
			{"zk_outstanding_requests", 0}, {"zk_znode_count", st.Nodes},
			{"zk_global_sessions", st.Sessions}, {"zk_local_sessions", 0},
			{"zk_watch_count", st.Watches}, {"zk_approximate_data_size", st.DataSize},
			{"zk_packets_received", s.received.Load()}, {"zk_packets_sent", s.sent.Load()},
			{"zk_uptime", time.Since(s.start).Milliseconds()},
		}
		for _, r := range rows {
			fmt.Fprintf(b, "%s\t%v\n", r.k, r.v)
		}
	case "cons":
		for _, c := range conns {
			c.writeBrief(b)
			if ws := c.sess.Load(); ws != nil {
				c.stats.mu.Lock()
				lastOp := c.stats.lastOp
				c.stats.mu.Unlock()
				fmt.Fprintf(b, ",sid=0x%x,lop=%s,est=%d,to=%d", ws.id, lastOp, c.since.UnixMilli(), ws.timeout.Milliseconds())
				c.stats.write(b)
			}
			b.WriteString(")\n")
		}
		b.WriteString("\n")
	case "dump":
		ids := s.SessionIDs()
		fmt.Fprintf(b, "SessionTracker dump:\nSession Sets (%d)/(%d):\n", len(ids), len(ids))
		for _, id := range ids {
			fmt.Fprintf(b, "\t0x%x\n", id)
		}
		fmt.Fprintf(b, "ephemeral nodes dump:\nSessions with Ephemerals (%d):\n", 0)
		b.WriteString("Connections dump:\n")
		fmt.Fprintf(b, "Connections Sets (%d)/(%d):\n", len(conns), len(conns))
		for _, c := range conns {
			var id int64
			if ws := c.sess.Load(); ws != nil {
				id = ws.id
			}
			fmt.Fprintf(b, "\tip: /%s sessionId: 0x%x\n", c.remote, id)
		}
	case "envi":
		host, _ := os.Hostname()
		wd, _ := os.Getwd()
		fmt.Fprintf(b, "Environment:\nzookeeper.version=%s\nhost.name=%s\n", Version, host)
		fmt.Fprintf(b, "go.version=%s\nos.name=%s\nos.arch=%s\nuser.dir=%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH, wd)
	case "conf":
		zo := s.zk.Options()
		port := s.opts.ClientPort
		fmt.Fprintf(b, "clientPort=%d\nsecureClientPort=-1\n", port)
		fmt.Fprintf(b, "tickTime=%d\nmaxClientCnxns=0\nminSessionTimeout=%d\nmaxSessionTimeout=%d\n",
			zo.TickTime.Milliseconds(), zo.MinSessionTimeout.Milliseconds(), zo.MaxSessionTimeout.Milliseconds())
		fmt.Fprintf(b, "clientPortListenBacklog=-1\nserverId=0\njute.maxbuffer=%d\nzookeeper.extendedTypesEnabled=%t\n",
			s.opts.MaxBuffer, zo.ExtendedTypes)
	}
}
