package connectjson

import "fmt"

// RenameKey returns source offset key with its connector name replaced by
// connector, exactly as a worker serializes the key of that connector's
// partition: '[', the name as Jackson writes a string (see [MarshalKey]),
// ',', the partition object's bytes copied from key untouched, ']'. An
// error says why key is not [connector, {partition}].
func RenameKey(key []byte, connector string) ([]byte, error) {
	_, _, raw, err := ParseKey(key)
	if err != nil {
		return nil, fmt.Errorf("rename key: %w", err)
	}
	b := append(make([]byte, 0, len(raw)+len(connector)+8), '[')
	b = appendString(b, connector)
	b = append(b, ',')
	b = append(b, raw...)
	return append(b, ']'), nil
}
