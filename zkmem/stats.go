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
	st := ServerStats{Nodes: len(s.tree.nodes) + len(s.tree.overflow), Sessions: len(s.sessions), LastZxid: s.zxid}
	for _, n := range s.tree.nodes {
		st.DataSize += int64(len(n.path) + len(n.data))
	}
	for _, n := range s.tree.overflow {
		st.DataSize += int64(len(n.path) + len(n.data))
	}
	for _, sess := range s.sessions {
		if sess.ephemerals != nil {
			st.Ephemerals += sess.ephemerals.len()
		}
	}
	for _, t := range []*watchTable{s.dataWatches, s.childWatches} {
		st.WatchPaths += len(t.paths)
		for _, e := range t.paths {
			st.Watches += len(e)
		}
	}
	return st
}
