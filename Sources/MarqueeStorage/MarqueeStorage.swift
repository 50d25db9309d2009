// MarqueeStorage: PostgreSQL and SQLite stores behind MarqueeCore's protocols. See DEVELOPERS.md.
