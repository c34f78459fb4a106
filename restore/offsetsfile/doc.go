// Package offsetsfile reads the offsets files an operator hands to
// `restore --from-file` into a snapshot that restore.Run restores like
// any other: a Connect REST offsets body (GET /connectors/NAME/offsets),
// a kafka-consumer-groups CSV (one group's export too), or a standalone
// worker's offsets file (offset.storage.file.filename, Java
// serialization); and it writes the last back (show --output
// standalone-file).
//
// The types to know are [OffsetsFile] ([ParseOffsetsFile],
// [ParseGroupCSV], [OffsetsFile.Snapshot]) and [StandaloneEntry]
// ([ReadStandaloneFile], [AppendStandaloneFile], [StandaloneEntries]). A
// file that does not validate is an error wrapping restore.ErrBadFile
// that lists every problem.
package offsetsfile
