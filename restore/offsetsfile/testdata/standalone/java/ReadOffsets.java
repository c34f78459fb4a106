// ReadOffsets reads a standalone Connect worker offsets file as Kafka's
// FileOffsetBackingStore.load() does (one readObject, which must be a
// HashMap) and prints each entry as "KEY VALUE", base64 of the bytes or "-"
// for null, sorted, one a line.
//
// Usage: java ReadOffsets.java FILE
import java.io.*;
import java.nio.file.*;
import java.util.*;

public class ReadOffsets {
    public static void main(String[] args) throws Exception {
        Object obj;
        try (ObjectInputStream is = new ObjectInputStream(Files.newInputStream(Paths.get(args[0])))) {
            obj = is.readObject();
            if (is.read() != -1) throw new IOException("data after the map");
        }
        if (!(obj instanceof HashMap)) throw new IOException("expected HashMap but found " + obj.getClass());
        List<String> lines = new ArrayList<>();
        for (Map.Entry<?, ?> e : ((HashMap<?, ?>) obj).entrySet()) {
            lines.add(encode((byte[]) e.getKey()) + " " + encode((byte[]) e.getValue()));
        }
        Collections.sort(lines);
        for (String l : lines) System.out.println(l);
    }

    static String encode(byte[] b) {
        return b == null ? "-" : Base64.getEncoder().encodeToString(b);
    }
}
