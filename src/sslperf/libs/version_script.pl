#!/usr/bin/env perl
# sslperf's linker version script for a shared libcrypto or libssl, written from OpenSSL's ordinals file
# (util/libcrypto.num, util/libssl.num), for the sources that lack OpenSSL's own util/mkdef.pl (the openssl-src crate
# strips it from 3.2 on; libs/build_systems.py points the Makefile here then). ELF only, as OpenSSL's Linux targets
# write it: one node per symbol version (3_0_0 -> OPENSSL_3.0.0), each inheriting the one before, the first holding
# `local: *` so that only the listed symbols are exported. Called as the Makefile calls mkdef.pl:
#   perl version_script.pl --version V --type lib --ordinals util/libcrypto.num --name libcrypto --OS linux
use strict;
use warnings;
use Getopt::Long;

my ($ordinals, $type, $os) = ("", "lib", "linux");
GetOptions("ordinals=s" => \$ordinals, "type=s" => \$type, "OS=s" => \$os, "version=s" => \my $unused_version,
           "name=s" => \my $unused_name, "ctest" => \my $unused_ctest)
    or die "usage: version_script.pl --ordinals FILE [--type lib] [--OS linux]\n";
die "version_script.pl writes ELF version scripts only (--type lib, a Linux or other ELF --OS), not --OS $os\n"
    if $type ne "lib" || $os =~ /^(VMS|WIN|mingw|Cygwin)/i;

# A symbol is exported on ELF unless its platforms (the second field of EXIST:PLATFORMS:KIND:FEATURES) exclude it:
# no platform named applies everywhere; `!X` entries exclude X only; a positive entry other than UNIX or ELF (VMS,
# _WIN32, __FreeBSD__) is that platform's alone.
sub on_elf {
    my @platforms = grep { $_ ne "" } split /,/, shift;
    return 0 if grep { /^!(UNIX|ELF)$/ } @platforms;
    my @only = grep { !/^!/ } @platforms;
    return !@only || grep { /^(UNIX|ELF)$/ } @only;
}

open my $in, "<", $ordinals or die "cannot read $ordinals: $!\n";
my %by_version;
while (my $line = <$in>) {
    next if $line =~ /^\s*(#|$)/;
    my ($symbol, undef, $version, $info) = split " ", $line;
    die "$ordinals:$.: not an ordinals line: $line" unless defined $info;
    my ($exists, $platforms) = split /:/, $info, 3;
    push @{$by_version{$version}}, $symbol if $exists eq "EXIST" && on_elf($platforms // "");
}
close $in;

my $before;
for my $version (sort { pack("N*", split /_/, $a) cmp pack("N*", split /_/, $b) } keys %by_version) {
    (my $node = "OPENSSL_$version") =~ s/(\d)_(?=\d)/$1./g;
    print "$node {\n    global:\n";
    print "        $_;\n" for sort @{$by_version{$version}};
    print "    local: *;\n" unless defined $before;
    print "}", (defined $before ? " $before" : ""), ";\n";
    $before = $node;
}
