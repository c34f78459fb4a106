package connectsim

// HoldHerder takes the lock of the requests a herder's tick thread runs
// one at a time, as a long request in that thread would hold it; the
// function returned releases it.
func HoldHerder(s *Server) (release func()) {
	s.herder.Lock()
	return s.herder.Unlock
}
