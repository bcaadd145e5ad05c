package ckptstore

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"
)

// chunkSize is the size of an object's chunks (nats.go's default: well
// under the servers' default maximum payload of 1 MiB).
const chunkSize = 128 << 10

// Publishing a chunk or an object's info: a stream that has no leader
// for a moment (an election, a bucket just created) answers "no
// responders" and is asked again every noLeaderWait, noLeaderTries times
// (10 s); an acknowledgement not received in ackTimeout is asked for
// again, with the same message ID (the stream drops a duplicate), up to
// ackTries times.
const (
	noLeaderWait  = 250 * time.Millisecond
	noLeaderTries = 40
	ackTimeout    = 10 * time.Second
	ackTries      = 3
)

// put stores the object meta.Name read from r in the bucket, in the
// layout jetstream's ObjectStore keeps (NATS ADR-20): r's bytes as chunks
// on $O.<bucket>.C.<nuid>, then the object's info on
// $O.<bucket>.M.<name> as a roll-up of that subject, then the previous
// version's chunks purged. The object is read back with the library's Get.
// finish is called once r has ended, before the info is published; it may
// fill in meta's Metadata, and an error from it aborts the put.
//
// The library's own Put is not used: it publishes the chunks
// asynchronously from one message and one buffer, both reused, and a
// chunk answered "no responders" is published again 250 ms later from
// that message, which by then holds a later chunk's bytes, behind the
// chunks sent meanwhile (nats.go v1.55.0 and v1.56.0). The object's
// digest is computed over what was read, so Put succeeds; the stored
// chunks are out of order for good. A CI run met it: a checkpoint
// written at a fleet's start, read from its second chunk on by every
// taker, its partition never served. Here each chunk is acknowledged
// before the next is read, so a chunk published again is published in
// its place, with its own bytes.
func (s *Store) put(ctx context.Context, meta jetstream.ObjectMeta, r io.Reader, finish func() error) (*jetstream.ObjectInfo, error) {
	old, err := s.obs.GetInfo(ctx, meta.Name, jetstream.GetObjectInfoShowDeleted())
	if err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
		return nil, err
	}
	id := nuid.Next()
	chunkSubj := "$O." + Bucket + ".C." + id
	abort := func(err error) (*jetstream.ObjectInfo, error) {
		// What was published of the new version is never read (its info
		// was not written); purge it now rather than leave it to the
		// stream. A failure here is the caller's error's consequence.
		pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ackTimeout)
		defer cancel()
		_ = s.stream.Purge(pctx, jetstream.WithPurgeSubject(chunkSubj))
		return nil, err
	}

	h := sha256.New()
	buf := make([]byte, chunkSize)
	var size uint64
	var chunks uint32
	for {
		n, rerr := io.ReadFull(r, buf)
		if rerr != nil && rerr != io.EOF && rerr != io.ErrUnexpectedEOF {
			return abort(rerr)
		}
		if n > 0 {
			h.Write(buf[:n])
			m := nats.NewMsg(chunkSubj)
			m.Data = buf[:n] // published and acknowledged before buf is reused
			if err := s.publish(ctx, m, id+"."+strconv.FormatUint(uint64(chunks), 10)); err != nil {
				return abort(fmt.Errorf("chunk %d: %w", chunks, err))
			}
			chunks++
			size += uint64(n)
		}
		if rerr != nil { // the end
			break
		}
	}
	if finish != nil {
		if err := finish(); err != nil {
			return abort(err)
		}
	}

	if meta.Opts == nil {
		meta.Opts = &jetstream.ObjectMetaOptions{ChunkSize: chunkSize}
	}
	info := &jetstream.ObjectInfo{
		ObjectMeta: meta,
		Bucket:     Bucket,
		NUID:       id,
		Size:       size,
		Chunks:     chunks,
		Digest:     "SHA-256=" + base64.URLEncoding.EncodeToString(h.Sum(nil)),
	}
	m := nats.NewMsg("$O." + Bucket + ".M." + base64.URLEncoding.EncodeToString([]byte(meta.Name)))
	m.Header.Set(jetstream.MsgRollup, jetstream.MsgRollupSubject)
	if m.Data, err = json.Marshal(info); err != nil {
		return abort(err)
	}
	if err := s.publish(ctx, m, id+".info"); err != nil {
		// The chunks stay: the info may have been stored all the same
		// (its acknowledgements lost), and an object whose chunks were
		// purged would not read at all. If it was not, they are left
		// unreachable, taking room.
		return nil, fmt.Errorf("object info: %w", err)
	}
	info.ModTime = time.Now().UTC()

	// The new version is in place: the old one's chunks go. One left by a
	// failure here is unreachable and only takes room.
	if old != nil && !old.Deleted && old.NUID != "" {
		_ = s.stream.Purge(ctx, jetstream.WithPurgeSubject("$O."+Bucket+".C."+old.NUID))
	}
	return info, nil
}

// publish publishes m to the bucket's stream and waits for its
// acknowledgement (see noLeaderTries and ackTries).
func (s *Store) publish(ctx context.Context, m *nats.Msg, msgID string) error {
	var err error
	for try := 0; try < ackTries; try++ {
		actx, cancel := context.WithTimeout(ctx, ackTimeout)
		_, err = s.js.PublishMsg(actx, m, jetstream.WithMsgID(msgID),
			jetstream.WithRetryAttempts(noLeaderTries), jetstream.WithRetryWait(noLeaderWait))
		cancel()
		if err == nil || ctx.Err() != nil ||
			!(errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout)) {
			return err
		}
	}
	return err
}
