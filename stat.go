package zksim

import "fmt"

// Stat is the metadata of a znode, as ZooKeeper's Stat record.
type Stat struct {
	Czxid          int64 // zxid of the create
	Mzxid          int64 // zxid of the last setData (or the create)
	Ctime          int64 // create time, milliseconds since the epoch
	Mtime          int64 // last setData time, milliseconds since the epoch
	Version        int32 // number of setData calls
	Cversion       int32 // number of child creates plus child deletes
	Aversion       int32 // number of setACL calls
	EphemeralOwner int64 // owning session id of an ephemeral node, else 0
	DataLength     int32 // length of the data
	NumChildren    int32 // number of children
	Pzxid          int64 // zxid of the last child create or delete (or the create)
}

func (s Stat) String() string {
	return fmt.Sprintf("{czxid:%#x mzxid:%#x pzxid:%#x ctime:%d mtime:%d version:%d cversion:%d aversion:%d owner:%#x len:%d children:%d}",
		s.Czxid, s.Mzxid, s.Pzxid, s.Ctime, s.Mtime, s.Version, s.Cversion, s.Aversion, s.EphemeralOwner, s.DataLength, s.NumChildren)
}
