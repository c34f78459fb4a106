package connectsim

// exactlyOnceRefused is the error DistributedHerder (Kafka 3.3+,
// validateSourceConnectorExactlyOnceSupport) gives exactly.once.support of
// a source config that requires exactly-once support when the worker's
// exactly.once.source.support is not "enabled"; "" otherwise.
func (s *Server) exactlyOnceRefused(p Plugin, key, value string) string {
	if p.Type != "source" || key != "exactly.once.support" || value != "required" || s.opts.ExactlyOnceSource == "enabled" {
		return ""
	}
	return "This worker does not have exactly-once source support enabled."
}
