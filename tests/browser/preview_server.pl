# A tiny HTTP/1.1 + WebSocket echo server for the preview URL tests (issue 30), perl-base only
# (debian:bookworm-slim has neither Digest::SHA nor MIME::Base64): perl preview_server.pl PORT NAME
use strict; use warnings; use IO::Socket::INET;
$SIG{CHLD} = 'IGNORE';
my ($port, $name) = @ARGV;
my $s = IO::Socket::INET->new(LocalPort => $port, Listen => 64, ReuseAddr => 1, Proto => 'tcp') or die "listen: $!";
sub sha1 {
  my $m = shift; my @h = (0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0);
  my $l = length($m) * 8; $m .= "\x80"; $m .= "\0" while length($m) % 64 != 56; $m .= pack('NN', 0, $l);
  for my $i (0 .. length($m) / 64 - 1) {
    my @w = unpack('N16', substr($m, $i * 64, 64));
    for my $t (16 .. 79) { my $x = $w[$t-3] ^ $w[$t-8] ^ $w[$t-14] ^ $w[$t-16]; $w[$t] = (($x << 1) | ($x >> 31)) & 0xffffffff; }
    my ($a, $b, $c, $d, $e) = @h;
    for my $t (0 .. 79) {
      my ($f, $k);
      if ($t < 20) { $f = ($b & $c) | ((~$b) & $d); $k = 0x5A827999 }
      elsif ($t < 40) { $f = $b ^ $c ^ $d; $k = 0x6ED9EBA1 }
      elsif ($t < 60) { $f = ($b & $c) | ($b & $d) | ($c & $d); $k = 0x8F1BBCDC }
      else { $f = $b ^ $c ^ $d; $k = 0xCA62C1D6 }
      my $tmp = ((($a << 5) | ($a >> 27)) + ($f & 0xffffffff) + $e + $k + $w[$t]) & 0xffffffff;
      $e = $d; $d = $c; $c = (($b << 30) | ($b >> 2)) & 0xffffffff; $b = $a; $a = $tmp;
    }
    $h[0] = ($h[0] + $a) & 0xffffffff; $h[1] = ($h[1] + $b) & 0xffffffff; $h[2] = ($h[2] + $c) & 0xffffffff;
    $h[3] = ($h[3] + $d) & 0xffffffff; $h[4] = ($h[4] + $e) & 0xffffffff;
  }
  return pack('N5', @h);
}
sub b64 {
  my $s = shift; my $r = pack('u', $s); $r =~ s/^.//mg; $r =~ s/\n//g; $r =~ tr|` -_|AA-Za-z0-9+/|;
  my $pad = (3 - length($s) % 3) % 3; substr($r, -$pad) = '=' x $pad if $pad; return $r;
}
sub readn { my ($c, $n) = @_; my $buf = ''; while (length($buf) < $n) { my $r = sysread($c, $buf, $n - length($buf), length($buf)); exit 0 unless $r; } return $buf; }
while (1) {
  my $c = $s->accept or next;
  if (fork) { close $c; next; }
  binmode $c;
  while (1) {
    my $head = '';
    while ($head !~ /\r\n\r\n$/) { my $r = sysread($c, my $b, 1); exit 0 unless $r; $head .= $b; }
    my ($path) = $head =~ /^\S+ (\S+)/;
    sleep 3600 if $path eq "/stall";   # never reads the body: the proxy must push back
    # Badly framed answers (the proxy must not relay what follows them as another answer).
    my $poison = "HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\npoisoned";
    my %bad = ('/extra' => "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello$poison",
      '/dupcl' => "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello",
      '/u101' => "HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: Upgrade\r\n\r\n$poison",
      '/chunked' => "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n");
    if ($bad{$path}) { syswrite($c, $bad{$path}); exit 0; }
    if ($head =~ /^Sec-WebSocket-Key:\s*(\S+)/mi) {
      my $acc = b64(sha1($1 . '258EAFA5-E914-47DA-95CA-C5AB0DC85B11'));
      syswrite($c, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: $acc\r\n\r\n");
      sleep 3600 if $path eq "/ws-stall";   # never reads the stream
      while (1) {
        my ($b1, $b2) = unpack('CC', readn($c, 2));
        my $len = $b2 & 127;
        $len = unpack('n', readn($c, 2)) if $len == 126;
        $len = unpack('Q>', readn($c, 8)) if $len == 127;
        my $mask = ($b2 & 128) ? readn($c, 4) : '';
        my $data = $len ? readn($c, $len) : '';
        $data ^= substr($mask x (int($len / 4) + 1), 0, $len) if $mask ne '';
        my $op = $b1 & 15;
        exit 0 if $op == 8;
        my $out = "echo:$data"; my $n = length($out);
        syswrite($c, chr(0x80 | $op) . ($n < 126 ? chr($n) : chr(126) . pack('n', $n)) . $out);
      }
    }
    my $body = "<!doctype html><html><body><h1 id=\"t\">hello from $name port $port path $path</h1></body></html>";
    syswrite($c, "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: " . length($body) . "\r\n\r\n" . ($head =~ /^HEAD/ ? '' : $body));
    exit 0 if $head =~ /^Connection:\s*close/mi;
  }
}
