package daemon

// The tests open s3://, gs:// and azblob:// stores: link the backends the
// commands link.
import _ "github.com/offsetkeeper/offsetkeeper/internal/storedrivers"
