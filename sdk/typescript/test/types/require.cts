// Type test: the CommonJS entry has declarations too (`require("threadless")`).
import threadless = require("threadless");

const client: threadless.Threadless = new threadless.Threadless({ apiKey: "tl_proj_x" });
void client.flush(1);
