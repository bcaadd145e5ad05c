// Package jsensure makes sure a fleet's JetStream stream, key-value bucket
// or object store exists with a given configuration, however many members
// ask at once.
//
// Every member of a fleet asks for the same streams and buckets as it
// starts, at about the same moment. nats.go's CreateOrUpdate functions
// first send an update; on a fresh cluster an update racing another
// member's create goes unanswered, and every member waits out its request
// timeout (5 s by default) once per stream: a fleet of three took 19 s to
// start. A create with a configuration identical to the existing (or
// in-flight) one is answered at once, so each function here creates first
// and updates only when the name is taken by another configuration (an
// upgrade that changed it). Invariant: a call answers as soon as
// JetStream does, and what exists afterwards has cfg's configuration.
package jsensure

import (
	"context"
	"errors"

	"github.com/nats-io/nats.go/jetstream"
)

// KeyValue returns the bucket cfg names, created or updated to cfg.
func KeyValue(ctx context.Context, js jetstream.JetStream, cfg jetstream.KeyValueConfig) (jetstream.KeyValue, error) {
	kv, err := js.CreateKeyValue(ctx, cfg)
	if errors.Is(err, jetstream.ErrBucketExists) {
		return js.UpdateKeyValue(ctx, cfg)
	}
	return kv, err
}

// Stream returns the stream cfg names, created or updated to cfg.
func Stream(ctx context.Context, js jetstream.JetStream, cfg jetstream.StreamConfig) (jetstream.Stream, error) {
	s, err := js.CreateStream(ctx, cfg)
	if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
		return js.UpdateStream(ctx, cfg)
	}
	return s, err
}

// ObjectStore returns the object store cfg names, created or updated to
// cfg.
func ObjectStore(ctx context.Context, js jetstream.JetStream, cfg jetstream.ObjectStoreConfig) (jetstream.ObjectStore, error) {
	obs, err := js.CreateObjectStore(ctx, cfg)
	if errors.Is(err, jetstream.ErrBucketExists) {
		return js.UpdateObjectStore(ctx, cfg)
	}
	return obs, err
}
