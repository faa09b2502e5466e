package zkmem

// ServerStats are the figures the four-letter words srvr, stat and mntr
// report.
type ServerStats struct {
	Nodes      int   // znodes, the root and system nodes included
	Ephemerals int   // ephemeral znodes
	Watches    int   // server-side watches, by path and session
	WatchPaths int   // paths watched
	DataSize   int64 // bytes of paths and data, as ApproximateDataSize
	Sessions   int   // live sessions
	LastZxid   int64
}

// Stats returns the server's figures for the four-letter words.
func (s *Server) Stats() ServerStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.statsOf(s)
}

// statsOf returns the figures of the state v holds (the server's own, or
// an ensemble member's view of it): its nodes, data and watches, and its
// last zxid; Sessions and Ephemerals are s's (an ensemble's leader's
// session tracker). Called with s.mu held.
func (s *Server) statsOf(v *Server) ServerStats {
	st := ServerStats{Nodes: len(v.tree.nodes) + len(v.tree.overflow), Sessions: len(s.sessions), LastZxid: v.zxid}
	for _, n := range v.tree.nodes {
		st.DataSize += int64(len(n.path) + len(n.data))
	}
	for _, n := range v.tree.overflow {
		st.DataSize += int64(len(n.path) + len(n.data))
	}
	for _, sess := range s.sessions {
		if sess.ephemerals != nil {
			st.Ephemerals += sess.ephemerals.len()
		}
	}
	for _, t := range []*watchTable{v.dataWatches, v.childWatches} {
		st.WatchPaths += len(t.paths)
		for _, e := range t.paths {
			st.Watches += len(e)
		}
	}
	return st
}
