// runtime/Plot.cpp — figures drawn by gnuplot (runtime/Plot.h).
//
// gnuplot, not a renderer of TSL's own: it is a Debian package (gnuplot-nox, no X),
// draws SVG, PNG (cairo) and text for a terminal from the same script, and has axes,
// ticks, legends, colour boxes and fonts right. The price is a child process per
// picture; a figure is drawn when it is saved or shown, never when it is made.
//
// Safety: the child is started with posix_spawnp (no shell) and gets only the script on
// its standard input. User text goes into single-quoted gnuplot strings, in which
// gnuplot expands no backslash escape, no `command` and no @macro; a quote is doubled,
// control characters become spaces (a newline would end the command), and `noenhanced`
// keeps _ ^ { } @ & literal. The data are numbers in inline datablocks.
#include "runtime/Plot.h"

#include "runtime/Interrupt.h"
#include "tsl/Error.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <string_view>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace tsl {
namespace {

/// `text` as a single-quoted gnuplot string (see the file comment).
std::string quoted(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\'') {
      out += "''";
    } else if (u < 0x20 || u == 0x7f) {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out + "'";
}

/// A number as gnuplot reads it: the shortest round-trip form; NaN and infinities are
/// NaN, which gnuplot leaves out of the drawing.
void appendNumber(std::string& out, double v) {
  if (!std::isfinite(v)) {
    out += "NaN";
    return;
  }
  char buffer[32];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, v);
  out.append(buffer, ec == std::errc() ? end : buffer);
}

const char* styleName(SeriesStyle style) {
  switch (style) {
  case SeriesStyle::Lines: return "lines lw 1.5";
  case SeriesStyle::Points: return "points pt 7 ps 0.6";
  case SeriesStyle::Boxes: return "boxes fs solid 0.5 border";
  }
  return "lines";
}

void appendTerminal(std::string& out, PlotFormat format, int width, int height) {
  const std::string size = std::to_string(width) + "," + std::to_string(height);
  switch (format) {
  case PlotFormat::Svg: out += "set terminal svg size " + size + " background rgb 'white'\n"; break;
  case PlotFormat::Png: out += "set terminal pngcairo size " + size + " background rgb 'white'\n"; break;
  case PlotFormat::Text: out += "set terminal dumb size " + size + " nofeed\n"; break;
  }
  out += "set output\nset encoding utf8\n";
}

} // namespace

std::string gnuplotScript(const PlotSpec& spec, PlotFormat format, int width, int height) {
  std::string out;
  appendTerminal(out, format, width, height);
  if (!spec.title.empty()) out += "set title " + quoted(spec.title) + " noenhanced\n";
  if (!spec.xlabel.empty()) out += "set xlabel " + quoted(spec.xlabel) + " noenhanced\n";
  if (!spec.ylabel.empty()) out += "set ylabel " + quoted(spec.ylabel) + " noenhanced\n";
  if (spec.rows > 0) {
    out += "$image << EOD\n";
    for (int64_t r = 0; r < spec.rows; ++r) {
      for (int64_t c = 0; c < spec.cols; ++c) {
        if (c) out += ' ';
        appendNumber(out, spec.image[static_cast<size_t>(r * spec.cols + c)]);
      }
      out += '\n';
    }
    out += "EOD\n";
    // Pixel centres at integers, row 0 at the top, square pixels, a grey scale.
    out += "set palette gray gamma 1\nset size ratio -1\nunset key\nset tics out\n";
    out += "set xrange [-0.5:" + std::to_string(spec.cols) + "-0.5]\n";
    out += "set yrange [" + std::to_string(spec.rows) + "-0.5:-0.5]\n";
    // The grey scale spans exactly the values: black the smallest, white the largest.
    double lo = INFINITY, hi = -INFINITY;
    for (double v : spec.image)
      if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
    if (lo <= hi) {
      if (lo == hi) lo -= 0.5, hi += 0.5;
      out += "set cbrange [";
      appendNumber(out, lo);
      out += ":";
      appendNumber(out, hi);
      out += "]\n";
    }
    out += "plot $image matrix with image notitle\n";
    return out;
  }
  for (size_t s = 0; s < spec.series.size(); ++s) {
    const PlotSeries& series = spec.series[s];
    out += "$series" + std::to_string(s) + " << EOD\n";
    for (size_t i = 0; i < series.x.size(); ++i) {
      appendNumber(out, series.x[i]);
      out += ' ';
      appendNumber(out, series.y[i]);
      out += '\n';
    }
    out += "EOD\n";
  }
  bool anyLabel = false;
  for (const PlotSeries& series : spec.series) anyLabel |= !series.label.empty();
  out += anyLabel ? "set key top right noenhanced\n" : "unset key\n";
  out += "set grid\nset style fill solid 0.5\n";
  // A series without a finite point is left out (gnuplot refuses to plot one); a figure
  // with none left is empty axes.
  auto drawable = [](const PlotSeries& series) {
    for (size_t i = 0; i < series.x.size(); ++i)
      if (std::isfinite(series.x[i]) && std::isfinite(series.y[i])) return true;
    return false;
  };
  std::string plots;
  for (size_t s = 0; s < spec.series.size(); ++s) {
    const PlotSeries& series = spec.series[s];
    if (!drawable(series)) continue;
    if (!plots.empty()) plots += ", ";
    plots += "$series" + std::to_string(s) + " using 1:2 with " + styleName(series.style);
    plots += series.label.empty() ? " notitle" : " title " + quoted(series.label) + " noenhanced";
  }
  out += plots.empty() ? "plot [0:1] [0:1] NaN notitle\n" : "plot " + plots + "\n";
  return out;
}

namespace {

/// Closes the descriptors it holds on every path out.
struct Descriptors {
  int fds[6] = {-1, -1, -1, -1, -1, -1};
  ~Descriptors() {
    for (int fd : fds)
      if (fd >= 0) ::close(fd);
  }
  void close(int& fd) {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

/// The environment for gnuplot: ours, with numbers read the C way whatever the locale.
std::vector<std::string> childEnvironment() {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    const std::string_view entry(*e);
    if (entry.starts_with("LC_ALL=") || entry.starts_with("LC_NUMERIC=")) continue;
    env.emplace_back(entry);
  }
  env.emplace_back("LC_NUMERIC=C");
  return env;
}

/// The line of gnuplot's complaint that says what is wrong ("line 7: undefined variable:
/// x", "... error ..."), trimmed; else its first line. gnuplot also echoes the command and
/// a caret under it, which say nothing by themselves.
std::string firstError(const std::string& err) {
  size_t from = 0;
  while (from < err.size()) {
    size_t end = err.find('\n', from);
    if (end == std::string::npos) end = err.size();
    const std::string line = err.substr(from, end - from);
    if (line.find("rror") != std::string::npos || line.find("line ") != std::string::npos) {
      const size_t start = line.find_first_not_of(' ');
      return line.substr(start == std::string::npos ? 0 : start);
    }
    from = end + 1;
  }
  return err.substr(0, err.find('\n'));
}

} // namespace

std::string renderPlot(const PlotSpec& spec, PlotFormat format, int width, int height, double timeoutSeconds) {
  const std::string script = gnuplotScript(spec, format, width, height);
  // stdin is a socket, so a write to a gnuplot that has died is EPIPE (MSG_NOSIGNAL),
  // never a SIGPIPE that would end TSL.
  Descriptors d;
  int& inParent = d.fds[0];
  int& inChild = d.fds[1];
  int& outParent = d.fds[2];
  int& outChild = d.fds[3];
  int& errParent = d.fds[4];
  int& errChild = d.fds[5];
  int sv[2], po[2], pe[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    fail(ErrorKind::Io, "plot: cannot create a pipe to gnuplot: ", std::strerror(errno));
  inParent = sv[0], inChild = sv[1];
  if (::pipe2(po, O_CLOEXEC) != 0 || (outParent = po[0], outChild = po[1], ::pipe2(pe, O_CLOEXEC) != 0))
    fail(ErrorKind::Io, "plot: cannot create a pipe to gnuplot: ", std::strerror(errno));
  errParent = pe[0], errChild = pe[1];

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, inChild, 0);
  posix_spawn_file_actions_adddup2(&actions, outChild, 1);
  posix_spawn_file_actions_adddup2(&actions, errChild, 2);
  // Its own process group, so a Ctrl-C meant for TSL reaches gnuplot only through us.
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  // Default dispositions and an empty mask, whatever this thread blocks (a notebook
  // kernel blocks SIGINT to wait for it on a thread of its own).
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  posix_spawnattr_setpgroup(&attributes, 0);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attributes, &none);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  sigaddset(&defaults, SIGINT);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  std::vector<std::string> env = childEnvironment();
  std::vector<char*> envp;
  for (std::string& entry : env) envp.push_back(entry.data());
  envp.push_back(nullptr);
  char program[] = "gnuplot";
  char* argv[] = {program, nullptr};
  pid_t pid = -1;
  const int spawned = ::posix_spawnp(&pid, "gnuplot", &actions, &attributes, argv, envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (spawned != 0)
    fail(ErrorKind::Io, "plot: cannot run gnuplot (", std::strerror(spawned),
         "); plots are drawn by gnuplot: install the Debian package gnuplot-nox");
  d.close(inChild);
  d.close(outChild);
  d.close(errChild);
  for (int fd : {inParent, outParent, errParent}) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);

  std::string out, err;
  size_t written = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeoutSeconds);
  auto stop = [&](auto... parts) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    fail(ErrorKind::Io, parts...);
  };
  while (outParent >= 0 || errParent >= 0) {
    if (interruptRequested()) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
      checkInterrupt();
    }
    if (std::chrono::steady_clock::now() > deadline)
      stop("plot: gnuplot did not finish within ", timeoutSeconds, " s");
    pollfd fds[3];
    int n = 0;
    if (inParent >= 0) fds[n++] = {inParent, POLLOUT, 0};
    if (outParent >= 0) fds[n++] = {outParent, POLLIN, 0};
    if (errParent >= 0) fds[n++] = {errParent, POLLIN, 0};
    if (::poll(fds, static_cast<nfds_t>(n), 100) < 0 && errno != EINTR)
      stop("plot: waiting for gnuplot failed: ", std::strerror(errno));
    for (int i = 0; i < n; ++i) {
      if (!fds[i].revents) continue;
      if (fds[i].fd == inParent) {
        const ssize_t k = ::send(inParent, script.data() + written, script.size() - written, MSG_NOSIGNAL);
        if (k > 0) written += static_cast<size_t>(k);
        if ((k < 0 && errno != EAGAIN && errno != EINTR) || written == script.size()) d.close(inParent);
        continue;
      }
      char buffer[65536];
      const ssize_t k = ::read(fds[i].fd, buffer, sizeof buffer);
      if (k > 0) {
        (fds[i].fd == outParent ? out : err).append(buffer, static_cast<size_t>(k));
        if (err.size() > (1 << 20)) stop("plot: gnuplot reported too much: ", firstError(err));
      } else if (k == 0 || (errno != EAGAIN && errno != EINTR)) {
        d.close(fds[i].fd == outParent ? outParent : errParent);
      }
    }
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || err.find("rror") != std::string::npos)
    fail(ErrorKind::Io, "plot: gnuplot failed: ", err.empty() ? std::string("no message") : firstError(err));
  if (out.empty()) fail(ErrorKind::Io, "plot: gnuplot drew nothing");
  return out;
}

Histogram histogram(const std::vector<double>& values, int64_t bins) {
  TSL_ASSERT(bins > 0, "a histogram needs a bin");
  Histogram h;
  double lo = INFINITY, hi = -INFINITY;
  for (double v : values)
    if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  if (lo > hi) lo = 0, hi = 1;
  if (lo == hi) lo -= 0.5, hi += 0.5;
  // linspace as NumPy computes it: start + i * (delta / n), the last edge exactly hi.
  const double step = (hi - lo) / static_cast<double>(bins);
  for (int64_t i = 0; i < bins; ++i) h.edges.push_back(lo + static_cast<double>(i) * step);
  h.edges.push_back(hi);
  h.counts.assign(static_cast<size_t>(bins), 0);
  // NumPy's search: the index from the scaled offset, then corrected against the edges.
  const double norm = static_cast<double>(bins) / (hi - lo);
  for (double v : values) {
    if (!std::isfinite(v)) continue;
    auto i = static_cast<int64_t>((v - lo) * norm);
    if (i == bins) --i;
    if (v < h.edges[static_cast<size_t>(i)]) --i;
    else if (i != bins - 1 && v >= h.edges[static_cast<size_t>(i) + 1]) ++i;
    ++h.counts[static_cast<size_t>(i)];
  }
  return h;
}

} // namespace tsl
