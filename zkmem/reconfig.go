package zkmem

import (
	"strconv"
	"strings"

	"github.com/zksim/zksim"
)

// Reconfig is the body of a reconfig request (ZooKeeper's
// ReconfigRequest). A nil string is a null one, which the server tells
// from an empty string: a null NewMembers asks for an incremental change
// (JoiningServers and LeavingServers), a non-null one for a whole new
// configuration.
type Reconfig struct {
	JoiningServers *string // "server.N=host:port:port[:role];[host:]port" entries, comma separated
	LeavingServers *string // server ids, comma separated
	NewMembers     *string // a dynamic configuration, entries separated by commas or newlines
	CurConfigID    int64   // -1, or the configuration version the change applies to
}

// ConfigVersion is the configuration version an ensemble's reconfig
// compares a CurConfigID other than -1 with: the version a fresh 3.8
// ensemble's first leader gives its static configuration, the zxid that
// opens its first epoch (Leader.lead, ZOOKEEPER-1783).
const ConfigVersion int64 = 0x100000000

// reconfig answers a reconfig on a server with reconfigEnabled, in the
// order of PrepRequestProcessor (3.8): a standalone server cannot
// reconfigure (Unimplemented); an ensemble's leader checks the version
// (BadVersion), builds the next configuration (BadArguments for a
// malformed one; MarshallingError where the Java server fails on a
// number it cannot parse), wants at least 2 voting members in it
// (BadArguments) and a synced quorum of them (NewConfigNoQuorum), and
// only then WRITE on /zookeeper/config (NoAuth: the world may only read
// it, the super user passes). A request that passes every check would
// change the members, which zkmem does not model: it is answered
// Unimplemented. Called with s.mu held, on the core of an ensemble.
func (s *Server) reconfig(sess *Session, r *Reconfig) error {
	e := s.ens
	if e == nil {
		return zksim.ErrUnimplemented
	}
	if r == nil {
		r = &Reconfig{CurConfigID: -1}
	}
	if r.CurConfigID != -1 && r.CurConfigID != ConfigVersion {
		return zksim.ErrBadVersion
	}
	var next map[int64]bool // server id → voting
	var err error
	if r.NewMembers != nil {
		next, err = parseNewMembers(*r.NewMembers)
	} else {
		next, err = e.incremental(r.JoiningServers, r.LeavingServers)
	}
	if err != nil {
		return err
	}
	voting := 0
	for _, v := range next {
		if v {
			voting++
		}
	}
	if voting < 2 {
		return zksim.ErrBadArguments // standaloneEnabled (the default): at least 2 voting members
	}
	if !e.quorumSynced(next, voting) {
		return zksim.ErrNewConfigNoQuorum
	}
	if err := checkACL(s.tree.get("/zookeeper/config").acl, zksim.PermWrite, sess.auth); err != nil {
		return err
	}
	return zksim.ErrUnimplemented
}

// incremental returns the configuration after removing leaving and adding
// (or replacing) joining, from the ensemble's own: member i is server i+1.
// Called with core.mu held.
func (e *Ensemble) incremental(joining, leaving *string) (map[int64]bool, error) {
	next := make(map[int64]bool, len(e.members))
	for _, m := range e.members {
		next[int64(m.id+1)] = !m.observer
	}
	if leaving != nil {
		for _, l := range splitTrim(*leaving, ",") {
			sid, err := strconv.ParseInt(l, 10, 64)
			if err != nil {
				return nil, zksim.ErrMarshallingError // a NumberFormatException escapes as one
			}
			delete(next, sid)
		}
	}
	if joining != nil {
		for _, j := range splitTrim(*joining, ",") {
			parts := splitTrim(j, "=")
			if len(parts) != 2 {
				return nil, zksim.ErrBadArguments
			}
			sid, err := strconv.ParseInt(parts[0][strings.LastIndexByte(parts[0], '.')+1:], 10, 64)
			if err != nil {
				return nil, zksim.ErrMarshallingError
			}
			voting, hasClient, err := parseServerSpec(parts[1])
			if err != nil {
				return nil, err
			}
			if !hasClient {
				return nil, zksim.ErrBadArguments // a joiner needs its client port
			}
			next[sid] = voting
		}
	}
	return next, nil
}

// parseNewMembers parses a whole configuration as QuorumPeerConfig's
// parseDynamicConfig does a java.util.Properties of it: server.N entries
// and version; any other key is refused (BadArguments), and group or
// weight keys (a hierarchical quorum) are not modelled and refused too.
func parseNewMembers(s string) (map[int64]bool, error) {
	next := map[int64]bool{}
	for _, line := range strings.Split(strings.ReplaceAll(s, ",", "\n"), "\n") {
		line = strings.TrimLeft(strings.TrimSuffix(line, "\r"), " \t\f")
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		key, value := splitProperty(line)
		key = strings.TrimSpace(key)
		switch {
		case strings.HasPrefix(key, "server."):
			sid, err := strconv.ParseInt(key[len("server."):], 10, 64)
			if err != nil {
				return nil, zksim.ErrMarshallingError
			}
			voting, _, err := parseServerSpec(value)
			if err != nil {
				return nil, err
			}
			next[sid] = voting
		case key == "version":
			if _, err := strconv.ParseInt(value, 16, 64); err != nil {
				return nil, zksim.ErrMarshallingError
			}
		default:
			return nil, zksim.ErrBadArguments
		}
	}
	voting := 0
	for _, v := range next {
		if v {
			voting++
		}
	}
	if (voting == 0 || voting == 1) && len(next) > voting {
		// Observers without a quorum: an IllegalArgumentException.
		return nil, zksim.ErrMarshallingError
	}
	return next, nil
}

// splitProperty splits a properties line as java.util.Properties does:
// the key ends at the first '=', ':' or white space; white space, then one
// '=' or ':' if the key ended at white space, then white space again come
// before the value.
func splitProperty(line string) (key, value string) {
	i := strings.IndexAny(line, "=: \t\f")
	if i < 0 {
		return line, ""
	}
	key, rest := line[:i], line[i:]
	if rest[0] == '=' || rest[0] == ':' {
		return key, strings.TrimLeft(rest[1:], " \t\f")
	}
	rest = strings.TrimLeft(rest, " \t\f")
	if rest != "" && (rest[0] == '=' || rest[0] == ':') {
		rest = strings.TrimLeft(rest[1:], " \t\f")
	}
	return key, rest
}

// parseServerSpec checks a QuorumServer address string,
// "host:port:port[:participant|observer][;[host:]port]", and reports
// whether it names a voting member and whether it has a client address.
// Malformed, it fails with BadArguments (a ConfigException), or
// MarshallingError for a port out of range (an IllegalArgumentException).
func parseServerSpec(spec string) (voting, hasClient bool, err error) {
	sc := strings.Split(spec, ";")
	if len(sc) > 2 {
		return false, false, zksim.ErrBadArguments
	}
	if len(sc) == 2 {
		cp := strings.Split(sc[1], ":")
		if len(cp) > 2 {
			return false, false, zksim.ErrBadArguments
		}
		if err := checkPort(cp[len(cp)-1]); err != nil {
			return false, false, err
		}
		hasClient = true
	}
	sp := strings.Split(sc[0], ":")
	if len(sp) < 3 || len(sp) > 4 {
		return false, false, zksim.ErrBadArguments
	}
	for _, p := range sp[1:3] {
		if err := checkPort(p); err != nil {
			return false, false, err
		}
	}
	if sp[1] == sp[2] {
		return false, false, zksim.ErrBadArguments // quorum and election ports must differ
	}
	voting = true
	if len(sp) == 4 {
		switch strings.ToLower(sp[3]) {
		case "participant":
		case "observer":
			voting = false
		default:
			return false, false, zksim.ErrBadArguments
		}
	}
	return voting, hasClient, nil
}

// checkPort parses a port as QuorumServer does: not a number is a
// ConfigException (BadArguments), out of range an
// IllegalArgumentException (MarshallingError).
func checkPort(p string) error {
	n, err := strconv.ParseInt(p, 10, 32)
	if err != nil {
		return zksim.ErrBadArguments
	}
	if n < 0 || n > 65535 {
		return zksim.ErrMarshallingError
	}
	return nil
}

// splitTrim splits s at sep, trims each part and drops the empty ones, as
// ZooKeeper's StringUtils.split does.
func splitTrim(s, sep string) []string {
	var out []string
	for _, p := range strings.Split(s, sep) {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// quorumSynced reports whether a majority of next's voting members are
// the leader or followers connected to it (Leader.isQuorumSynced): up and
// not isolated. Observers and servers not in the ensemble never count.
// Called with core.mu held.
func (e *Ensemble) quorumSynced(next map[int64]bool, voting int) bool {
	if e.leader < 0 {
		return false
	}
	n := 0
	for _, m := range e.members {
		if !next[int64(m.id+1)] {
			continue
		}
		if m.id == e.leader || (!m.observer && m.up && !m.isolated) {
			n++
		}
	}
	return 2*n > voting
}
