# private-apt.sh - sourced by Deploy/with-*.sh: fetch packages of another Debian suite into a
# private root with an apt configuration of its own (the system's apt state is not changed).
#
#   private_apt_begin ROOT SUITE     write the configuration under ROOT/.apt, export APT_CONFIG,
#                                    and update its package lists
#   private_apt_unpack ROOT PKG...   download PKG... and unpack them into ROOT; unset APT_CONFIG
#
# Between the two, apt-get and apt-cache see only SUITE (e.g. to look up a package's name).

private_apt_begin() {
  local root=$1 suite=$2 apt_dir=$1/.apt
  mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/debs"
  : > "$apt_dir/status"
  cat > "$apt_dir/sources.list" <<SRC
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $suite main
SRC
  cat > "$apt_dir/apt.conf" <<CONF
Dir::State "$apt_dir";
Dir::State::Lists "$apt_dir/lists";
Dir::State::status "$apt_dir/status";
Dir::Cache "$apt_dir/cache";
Dir::Etc::SourceList "$apt_dir/sources.list";
Dir::Etc::SourceParts "/nonexistent";
APT::Sandbox::User "root";
APT::Architecture "$(dpkg --print-architecture)";
CONF
  export APT_CONFIG=$apt_dir/apt.conf
  apt-get update -qq
}

private_apt_unpack() {
  local root=$1; shift
  (cd "$root/.apt/debs" && apt-get download -qq "$@")
  local deb
  for deb in "$root"/.apt/debs/*.deb; do dpkg-deb -x "$deb" "$root"; done
  unset APT_CONFIG
}
