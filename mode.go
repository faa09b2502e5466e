package zksim

import "fmt"

// CreateMode is the kind of znode Create makes. The values are ZooKeeper's
// CreateMode codes.
type CreateMode int32

const (
	ModePersistent                  CreateMode = 0
	ModeEphemeral                   CreateMode = 1
	ModePersistentSequential        CreateMode = 2
	ModeEphemeralSequential         CreateMode = 3
	ModeContainer                   CreateMode = 4
	ModePersistentWithTTL           CreateMode = 5
	ModePersistentSequentialWithTTL CreateMode = 6
)

// IsSequential reports whether the server appends a sequence number.
func (m CreateMode) IsSequential() bool {
	return m == ModePersistentSequential || m == ModeEphemeralSequential || m == ModePersistentSequentialWithTTL
}

// IsEphemeral reports whether the node goes away with its session.
func (m CreateMode) IsEphemeral() bool {
	return m == ModeEphemeral || m == ModeEphemeralSequential
}

// IsContainer reports whether this is ModeContainer.
func (m CreateMode) IsContainer() bool { return m == ModeContainer }

// IsTTL reports whether the node has a time to live.
func (m CreateMode) IsTTL() bool {
	return m == ModePersistentWithTTL || m == ModePersistentSequentialWithTTL
}

// Valid reports whether m is one of the defined modes.
func (m CreateMode) Valid() bool { return m >= ModePersistent && m <= ModePersistentSequentialWithTTL }

func (m CreateMode) String() string {
	switch m {
	case ModePersistent:
		return "PERSISTENT"
	case ModeEphemeral:
		return "EPHEMERAL"
	case ModePersistentSequential:
		return "PERSISTENT_SEQUENTIAL"
	case ModeEphemeralSequential:
		return "EPHEMERAL_SEQUENTIAL"
	case ModeContainer:
		return "CONTAINER"
	case ModePersistentWithTTL:
		return "PERSISTENT_WITH_TTL"
	case ModePersistentSequentialWithTTL:
		return "PERSISTENT_SEQUENTIAL_WITH_TTL"
	}
	return fmt.Sprintf("CreateMode(%d)", int32(m))
}

// MaxTTLMillis is the longest TTL ZooKeeper accepts (EphemeralType.MAX_TTL:
// 2^40 - 1 milliseconds, about 34 years).
const MaxTTLMillis = 1<<40 - 1
