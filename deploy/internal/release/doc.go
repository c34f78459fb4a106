// Package release makes and checks offsetkeeper's release artifacts
// without goreleaser, ko or a Docker engine, with the standard library
// only: the binaries' .tar.gz archives (WriteArchive), the checksums file
// (WriteChecksums, sha256sum -c compatible) and the container image as an
// OCI image layout tarball built from scratch (WriteImage). VerifyImage,
// VerifyChecksums, CheckBinary and CheckBuild check what they wrote, as
// deploy/release --check does in CI. The command is
// deploy/internal/releasetool; deploy/release drives it.
package release
