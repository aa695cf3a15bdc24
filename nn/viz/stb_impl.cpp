// The one translation unit that compiles stb's image reader and writer (libstb-dev ships
// them as headers: each must be compiled exactly once in a program, with its
// *_IMPLEMENTATION macro defined). Everything else includes the headers without it.
//
// STBI_FAILURE_USERMSG is not set: stb then keeps its short, specific failure reasons
// ("bad png sig", "unknown image type"), which read_image puts into its error messages.
#define STB_IMAGE_IMPLEMENTATION
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb_image.h>
#include <stb_image_write.h>
