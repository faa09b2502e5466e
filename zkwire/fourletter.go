package zkwire

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/zksim/zksim/zkmem"
)

// zkNotServing is what a member that runs no ZooKeeperServer (no leader
// to follow) answers most four-letter words with.
const zkNotServing = "This ZooKeeper instance is not currently serving requests"

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
		c.srv.answer(&b, word, c.member, c.localPort())
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

// answer writes the answer to word asked on the port of member (-1: the
// server's own port), whose port number is port.
func (s *Server) answer(b *strings.Builder, word string, member, port int) {
	st, mode := s.zk.Stats(), "standalone"
	conns := s.connList()
	if member >= 0 {
		role := s.ens.Role(member)
		if role == zkmem.RoleLooking && word != "ruok" && word != "envi" && word != "isro" {
			// A member with no leader to follow runs no ZooKeeperServer.
			b.WriteString(zkNotServing + "\n")
			return
		}
		st, mode = s.ens.MemberStats(member), role.String()
		conns = slices.DeleteFunc(conns, func(c *conn) bool { return c.member != member })
	}
	min, avg, max := s.lat.get()
	switch word {
	case "ruok":
		b.WriteString("imok")
	case "isro":
		switch mode {
		case "looking":
			b.WriteString("null")
		case "read-only":
			b.WriteString("ro")
		default:
			b.WriteString("rw")
		}
	case "srvr", "stat":
		fmt.Fprintf(b, "Zookeeper version: %s\n", Version)
		if mode == "read-only" {
			b.WriteString("READ-ONLY mode; serving only read-only clients\n")
		}
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
		fmt.Fprintf(b, "Zxid: 0x%x\nMode: %s\nNode count: %d\n", st.LastZxid, mode, st.Nodes)
		if mode == "leader" {
			// The leader's proposal sizes are not tracked: they read as
			// those of a leader that has proposed nothing.
			b.WriteString("Proposal sizes last/min/max: -1/-1/-1\n")
		}
	case "mntr":
		rows := []struct {
			k string
			v any
		}{
			{"zk_version", Version}, {"zk_server_state", mode},
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
		if member >= 0 {
			s.memberRows(b, member, mode)
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
		if member < 0 {
			port = s.opts.ClientPort
		}
		fmt.Fprintf(b, "clientPort=%d\nsecureClientPort=-1\n", port)
		fmt.Fprintf(b, "tickTime=%d\nmaxClientCnxns=0\nminSessionTimeout=%d\nmaxSessionTimeout=%d\n",
			zo.TickTime.Milliseconds(), zo.MinSessionTimeout.Milliseconds(), zo.MaxSessionTimeout.Milliseconds())
		fmt.Fprintf(b, "clientPortListenBacklog=-1\nserverId=%d\njute.maxbuffer=%d\nzookeeper.extendedTypesEnabled=%t\n",
			member+1, s.opts.MaxBuffer, zo.ExtendedTypes)
	}
}

// memberRows writes the rows a 3.8 ensemble member's mntr adds to a
// standalone server's: its peer state and the quorum's size, and on the
// leader the gauges LeaderZooKeeperServer registers: its learners (the
// members up and in the quorum besides itself), the voting followers and
// observers among them, no pending syncs (a sync is answered as its member
// applies), how long it has led, and proposal sizes that are not tracked
// (-1, as on a leader that has proposed nothing).
func (s *Server) memberRows(b *strings.Builder, member int, mode string) {
	peer := map[string]string{
		"leader": "leading - broadcast", "follower": "following - broadcast",
		"observer": "observing - broadcast", "read-only": "looking - election",
	}[mode]
	e := s.ens
	fmt.Fprintf(b, "zk_peer_state\t%s\nzk_quorum_size\t%d\n", peer, e.Size()-e.Observers())
	if mode != "leader" {
		return
	}
	learners, followers, observers := 0, 0, 0
	for i := range e.Size() {
		if i == member {
			continue
		}
		switch e.Role(i) {
		case zkmem.RoleFollower:
			learners++
			followers++
		case zkmem.RoleObserver:
			learners++
			observers++
		}
	}
	s.mu.Lock()
	since := s.leaderSince
	s.mu.Unlock()
	fmt.Fprintf(b, "zk_learners\t%d\nzk_synced_followers\t%d\nzk_synced_non_voting_followers\t0\nzk_synced_observers\t%d\nzk_pending_syncs\t0\n",
		learners, followers, observers)
	fmt.Fprintf(b, "zk_leader_uptime\t%d\nzk_last_proposal_size\t-1\nzk_max_proposal_size\t-1\nzk_min_proposal_size\t-1\n",
		time.Since(since).Milliseconds())
}

// localPort is the port the connection came to, 0 if it has none.
func (c *conn) localPort() int {
	if c.nc == nil {
		return 0
	}
	if a, ok := c.nc.LocalAddr().(*net.TCPAddr); ok {
		return a.Port
	}
	return 0
}
