// photo-watch: a reader that looks at a photo directory as often as it can while photos are
// being written, and reports every look that found a photo's final name holding less than a
// whole JPEG (not FFD8 at its start and FFD9 at its end). Temporary files (".shutter-tmp-*")
// are not photos yet and only counted: one seen with some but not all of a JPEG's bytes
// proves a look landed while a photo was being written.
//
//   photo-watch DIR STOPFILE     looks until STOPFILE exists, then prints a summary line:
//     looks N names N short N partial-temporaries N
//   and before it, one line per short sighting: "short NAME SIZE".
//   Exit status 0 when no look found a short photo.
//
//   cc -O2 -o photo-watch photo-watch.c
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

// Whether the file at DIR/NAME is a whole JPEG now; *size gets its size (-1: gone meanwhile).
static int whole_jpeg(int directory, const char *name, long *size) {
    *size = -1;
    int fd = openat(directory, name, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 1;   // renamed or removed between the listing and the open: nothing seen
    struct stat info;
    unsigned char head[2] = {0}, tail[2] = {0};
    int whole = fstat(fd, &info) == 0 && (*size = info.st_size) >= 4 &&
                pread(fd, head, 2, 0) == 2 && pread(fd, tail, 2, info.st_size - 2) == 2 &&
                head[0] == 0xff && head[1] == 0xd8 && tail[0] == 0xff && tail[1] == 0xd9;
    close(fd);
    return whole;
}

int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: photo-watch DIR STOPFILE\n"); return 2; }
    long looks = 0, names = 0, shorts = 0, partial_temporaries = 0;
    while (access(argv[2], F_OK) != 0) {
        int directory = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *listing = directory < 0 ? NULL : fdopendir(dup(directory));
        if (!listing) { if (directory >= 0) close(directory); usleep(1000); continue; }
        looks++;
        struct dirent *entry;
        while ((entry = readdir(listing))) {
            const char *name = entry->d_name;
            if (name[0] == '.' && (name[1] == 0 || (name[1] == '.' && name[2] == 0))) continue;
            long size;
            if (strncmp(name, ".shutter-tmp-", 13) == 0) {
                if (!whole_jpeg(directory, name, &size) && size > 0) partial_temporaries++;
                continue;
            }
            names++;
            if (!whole_jpeg(directory, name, &size) && size >= 0) {
                shorts++;
                if (shorts <= 20) printf("short %s %ld\n", name, size);
            }
        }
        closedir(listing);
        close(directory);
    }
    printf("looks %ld names %ld short %ld partial-temporaries %ld\n", looks, names, shorts, partial_temporaries);
    return shorts != 0;
}
