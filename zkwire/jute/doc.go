// Package jute is the codec of ZooKeeper's client protocol: the
// length-prefixed frames and the jute records that travel in them (the
// connect handshake, request and reply headers, every request and response
// record of a ZooKeeper 3.8 client, watch notifications), the op codes and
// the error codes. It knows nothing of a server: package zkwire is the
// server, built on it.
//
// Encoding follows org.apache.jute.BinaryOutputArchive: int and long are
// big-endian, a boolean is one byte, a buffer or ustring is an int length
// (-1 for null) and its bytes, a vector is an int count (-1 for null) and
// its elements. The record layouts are those of zookeeper.jute in release
// 3.8.
//
// Decoding never panics: a short or malformed record is an error
// ([ErrShort], [ErrBadLength]), and [ReadFrame] rejects a frame whose length
// is negative or over the maximum (jute.maxbuffer, [DefaultMaxBuffer]) with
// [ErrFrameTooLarge], as a server does before it closes the connection.
package jute
