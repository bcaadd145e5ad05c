package fpshard

// SetPublish replaces the publishing of adds (Conn.Publish) with f. Call
// it before the first add.
func SetPublish(s *Shard, f func(subject string, data []byte) error) { s.publishFn = f }
