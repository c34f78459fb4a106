// WriteOffsets writes a standalone Connect worker offsets file exactly as
// Kafka's FileOffsetBackingStore.save() does: a new HashMap<byte[], byte[]>
// filled with the raw key and value bytes, written with one
// ObjectOutputStream.writeObject.
//
// Usage: java WriteOffsets.java OUT < spec
// Each spec line is "KEY VALUE": base64 of the key bytes (or "-" for a null
// key) and of the value bytes (or "-" for a null value, a tombstone).
//
// With "java WriteOffsets.java --other KIND OUT" it writes something that
// is not a HashMap<byte[],byte[]> (for the reader's refusal tests):
// KIND is string-map, list, treemap or integer-value.
import java.io.*;
import java.nio.charset.StandardCharsets;
import java.util.*;

public class WriteOffsets {
    public static void main(String[] args) throws Exception {
        if (args.length == 3 && args[0].equals("--other")) {
            writeOther(args[1], args[2]);
            return;
        }
        Map<byte[], byte[]> raw = new HashMap<>();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = in.readLine()) != null; ) {
            if (line.isEmpty()) continue;
            String[] f = line.split(" ", -1);
            raw.put(decode(f[0]), decode(f[1]));
        }
        try (FileOutputStream fileOut = new FileOutputStream(args[0]);
             ObjectOutputStream os = new ObjectOutputStream(fileOut)) {
            os.writeObject(raw);
        }
    }

    static byte[] decode(String s) {
        return s.equals("-") ? null : Base64.getDecoder().decode(s);
    }

    static void writeOther(String kind, String out) throws Exception {
        Object o;
        switch (kind) {
            case "string-map": {
                Map<String, String> m = new HashMap<>();
                m.put("k", "v");
                o = m;
                break;
            }
            case "list":
                o = new ArrayList<>(List.of("a"));
                break;
            case "treemap": {
                TreeMap<String, String> m = new TreeMap<>();
                m.put("k", "v");
                o = m;
                break;
            }
            case "integer-value": {
                Map<byte[], Object> m = new HashMap<>();
                m.put("k".getBytes(StandardCharsets.UTF_8), Integer.valueOf(7));
                o = m;
                break;
            }
            default:
                throw new IllegalArgumentException(kind);
        }
        try (ObjectOutputStream os = new ObjectOutputStream(new FileOutputStream(out))) {
            os.writeObject(o);
        }
    }
}
