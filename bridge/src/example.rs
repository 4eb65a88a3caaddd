//! The example vault that `datanotes init --example films` writes: the film diary of the docs.
//!
//! Each entry is (vault-relative path, contents), one per file under `bridge/assets/films/`,
//! sorted by path in byte order. Add a file there and list it here too.

pub const FILMS: &[(&str, &str)] = &[
    ("Notes/Film night.md", include_str!("../assets/films/Notes/Film night.md")),
    (
        "datanotes/main/public/film/Battleship Potemkin.md",
        include_str!("../assets/films/datanotes/main/public/film/Battleship Potemkin.md"),
    ),
    ("datanotes/main/public/film/Charade.md", include_str!("../assets/films/datanotes/main/public/film/Charade.md")),
    (
        "datanotes/main/public/film/His Girl Friday.md",
        include_str!("../assets/films/datanotes/main/public/film/His Girl Friday.md"),
    ),
    (
        "datanotes/main/public/film/Metropolis.md",
        include_str!("../assets/films/datanotes/main/public/film/Metropolis.md"),
    ),
    (
        "datanotes/main/public/film/Nosferatu.md",
        include_str!("../assets/films/datanotes/main/public/film/Nosferatu.md"),
    ),
    (
        "datanotes/main/public/film/Sherlock Jr..md",
        include_str!("../assets/films/datanotes/main/public/film/Sherlock Jr..md"),
    ),
    (
        "datanotes/main/public/film/The Gold Rush.md",
        include_str!("../assets/films/datanotes/main/public/film/The Gold Rush.md"),
    ),
    ("datanotes/main/public/genre/Cinema.md", include_str!("../assets/films/datanotes/main/public/genre/Cinema.md")),
    (
        "datanotes/main/public/genre/Expressionism.md",
        include_str!("../assets/films/datanotes/main/public/genre/Expressionism.md"),
    ),
    (
        "datanotes/main/public/genre/Screwball comedy.md",
        include_str!("../assets/films/datanotes/main/public/genre/Screwball comedy.md"),
    ),
    (
        "datanotes/main/public/genre/Silent film.md",
        include_str!("../assets/films/datanotes/main/public/genre/Silent film.md"),
    ),
    (
        "datanotes/main/public/genre/Slapstick comedy.md",
        include_str!("../assets/films/datanotes/main/public/genre/Slapstick comedy.md"),
    ),
    (
        "datanotes/main/public/genre/Sound film.md",
        include_str!("../assets/films/datanotes/main/public/genre/Sound film.md"),
    ),
    (
        "datanotes/main/public/genre/Soviet montage.md",
        include_str!("../assets/films/datanotes/main/public/genre/Soviet montage.md"),
    ),
    (
        "datanotes/main/public/genre/Thriller.md",
        include_str!("../assets/films/datanotes/main/public/genre/Thriller.md"),
    ),
    (
        "datanotes/main/public/person/Audrey Hepburn.md",
        include_str!("../assets/films/datanotes/main/public/person/Audrey Hepburn.md"),
    ),
    (
        "datanotes/main/public/person/Brigitte Helm.md",
        include_str!("../assets/films/datanotes/main/public/person/Brigitte Helm.md"),
    ),
    (
        "datanotes/main/public/person/Buster Keaton.md",
        include_str!("../assets/films/datanotes/main/public/person/Buster Keaton.md"),
    ),
    (
        "datanotes/main/public/person/Cary Grant.md",
        include_str!("../assets/films/datanotes/main/public/person/Cary Grant.md"),
    ),
    (
        "datanotes/main/public/person/Charlie Chaplin.md",
        include_str!("../assets/films/datanotes/main/public/person/Charlie Chaplin.md"),
    ),
    (
        "datanotes/main/public/person/F. W. Murnau.md",
        include_str!("../assets/films/datanotes/main/public/person/F. W. Murnau.md"),
    ),
    (
        "datanotes/main/public/person/Fritz Lang.md",
        include_str!("../assets/films/datanotes/main/public/person/Fritz Lang.md"),
    ),
    (
        "datanotes/main/public/person/Howard Hawks.md",
        include_str!("../assets/films/datanotes/main/public/person/Howard Hawks.md"),
    ),
    (
        "datanotes/main/public/person/Sergei Eisenstein.md",
        include_str!("../assets/films/datanotes/main/public/person/Sergei Eisenstein.md"),
    ),
    (
        "datanotes/main/public/person/Stanley Donen.md",
        include_str!("../assets/films/datanotes/main/public/person/Stanley Donen.md"),
    ),
    (
        "datanotes/main/public/watch/2026-09-25T2100.md",
        include_str!("../assets/films/datanotes/main/public/watch/2026-09-25T2100.md"),
    ),
    (
        "datanotes/main/public/watch/2026-10-03T2130.md",
        include_str!("../assets/films/datanotes/main/public/watch/2026-10-03T2130.md"),
    ),
    (
        "datanotes/main/public/watch/2026-10-08T1930.md",
        include_str!("../assets/films/datanotes/main/public/watch/2026-10-08T1930.md"),
    ),
    ("datanotes/metastore.yaml", include_str!("../assets/films/datanotes/metastore.yaml")),
];

#[cfg(test)]
mod tests {
    use super::FILMS;

    #[test]
    fn films_are_sorted_unique_and_end_with_a_newline() {
        for pair in FILMS.windows(2) {
            assert!(pair[0].0 < pair[1].0, "{} before {}", pair[0].0, pair[1].0);
        }
        for (path, text) in FILMS {
            assert!(text.ends_with('\n'), "{path} must end with a newline");
            assert!(!text.contains('\r'), "{path} must use LF line endings");
        }
    }

    #[test]
    fn every_row_starts_with_its_table_and_id() {
        for (path, text) in FILMS {
            let Some(rest) = path.strip_prefix("datanotes/main/public/") else {
                continue;
            };
            let table = rest.split('/').next().unwrap();
            let expected = format!("---\ntable: main.public.{table}\nid: ");
            assert!(text.starts_with(&expected), "{path}");
        }
    }
}
