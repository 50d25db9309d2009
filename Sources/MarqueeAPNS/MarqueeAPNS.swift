// MarqueeAPNS: the APNs provider client. See DEVELOPERS.md for the module's place in Marquee.
